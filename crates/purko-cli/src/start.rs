//! What every long-running command does first: logs on standard error, the manifests, a Tokio
//! runtime, and an engine on the store under `PURKO_HOME`. Standard output stays free for the
//! commands that speak a protocol on it.

use std::path::PathBuf;
use std::sync::Arc;

use purko_config::Manifests;
use purko_config::env::Environment;
use purko_engine::{Engine, EngineOptions};
use purko_store::SqliteStore;

use crate::Failure;

/// Logs to standard error; `PURKO_LOG` overrides `default` (a tracing filter such as `warn`).
///
/// By default rmcp's transport worker is quiet: it logs every failed connection to an MCP
/// server as an error with the HTTP client's whole debug dump, on each retry, where Purko's
/// supervisor already says the same in one sentence with what to check.
pub fn logging(default: &str, ansi: bool) {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(ansi)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PURKO_LOG").unwrap_or_else(|_| {
                tracing_subscriber::EnvFilter::new(format!("{default},rmcp::transport::worker=off"))
            }),
        )
        .init();
}

/// The manifests of these files and folders; none at all when no path is given.
pub fn manifests(paths: &[PathBuf]) -> Result<Manifests, Failure> {
    if paths.is_empty() {
        return Ok(Manifests::default());
    }
    purko_config::load(paths).map_err(|e| Failure::new(e.to_string(), e.hint(), 1))
}

/// How many threads a command's runtime runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// One thread, so a call never waits for a wake-up on another core (blocking work still
    /// goes to tokio's blocking pool, the store's writes to its own thread).
    One,
    /// This many threads; 0 for one per core.
    Count(usize),
}

impl Threads {
    /// `--threads`: 1 is [`Threads::One`], 0 one per core.
    pub fn of(count: usize) -> Self {
        if count == 1 {
            Self::One
        } else {
            Self::Count(count)
        }
    }
}

pub fn runtime(threads: Threads) -> Result<tokio::runtime::Runtime, Failure> {
    let mut builder = match threads {
        Threads::One => tokio::runtime::Builder::new_current_thread(),
        Threads::Count(count) => {
            let mut builder = tokio::runtime::Builder::new_multi_thread();
            if count > 0 {
                builder.worker_threads(count);
            }
            builder
        }
    };
    builder.enable_all().build().map_err(|e| {
        Failure::new(
            format!("cannot start the runtime: {e}"),
            "check the machine's thread and file limits",
            1,
        )
    })
}

/// The engine over the store in the state folder; it starts the registered MCP servers.
pub async fn engine(env: &Environment, manifests: &Manifests) -> Result<Arc<Engine>, Failure> {
    let store =
        SqliteStore::open(&env.home).map_err(|e| Failure::new(e.to_string(), e.hint(), 1))?;
    let engine = Engine::new(manifests, Arc::new(store), EngineOptions::default())
        .await
        .map_err(|e| Failure::new(e.to_string(), e.hint(), 1))?;
    Ok(Arc::new(engine))
}
