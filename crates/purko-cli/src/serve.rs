//! `purko serve`: loads the manifests, opens the store, and serves the API until interrupted.

use std::sync::Arc;

use purko_config::env::Environment;
use purko_engine::{Engine, EngineOptions};
use purko_store::SqliteStore;

use crate::{Failure, ServeArgs};

pub fn serve(args: &ServeArgs) -> Result<(), Failure> {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("PURKO_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .init();
    let env = Environment::from_process();
    let manifests = if args.manifests.is_empty() {
        tracing::warn!("no manifests given: serving no agents; pass manifest files or folders");
        purko_config::Manifests::default()
    } else {
        purko_config::load(&args.manifests).map_err(|e| Failure::new(e.to_string(), e.hint(), 1))?
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| {
            Failure::new(
                format!("cannot start the runtime: {e}"),
                "check the machine's thread and file limits",
                1,
            )
        })?;
    runtime.block_on(run(args, env, manifests))
}

async fn run(
    args: &ServeArgs,
    env: Environment,
    manifests: purko_config::Manifests,
) -> Result<(), Failure> {
    let store =
        SqliteStore::open(&env.home).map_err(|e| Failure::new(e.to_string(), e.hint(), 1))?;
    let engine = Engine::new(&manifests, Arc::new(store), EngineOptions::default())
        .await
        .map_err(|e| Failure::new(e.to_string(), e.hint(), 1))?;
    let engine = Arc::new(engine);
    let (tokens, files) = purko_server::load_or_create_tokens(
        &env.home,
        env.operator_token.clone(),
        env.agent_token.clone(),
    )
    .map_err(|e| {
        Failure::new(
            format!("cannot set up the API tokens under {}: {e}", env.home.display()),
            "check that the state folder is writable, or set PURKO_OPERATOR_TOKEN and PURKO_AGENT_TOKEN",
            1,
        )
    })?;
    // Before the port opens: whoever connects first can already read how to authenticate.
    for path in &files.created {
        let token = std::fs::read_to_string(path).unwrap_or_default();
        eprintln!(
            "purko serve: made {} (mode 0600): {}",
            path.display(),
            token.trim()
        );
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| {
            Failure::new(
                format!("cannot listen on {}: {e}", args.listen),
                "stop the other process on that port or pass --listen 127.0.0.1:<another port>",
                1,
            )
        })?;
    let address = listener.local_addr().unwrap_or(args.listen);
    let housekeeping = engine.spawn_housekeeping();
    let agents: Vec<&str> = engine.agent_keys().collect();
    eprintln!(
        "purko serve: listening on http://{address} with {} agent(s): {}; state in {}",
        agents.len(),
        agents.join(", "),
        env.home.display()
    );
    let router = purko_server::router(Arc::clone(&engine), tokens);
    let result = purko_server::serve(listener, router, shutdown()).await;
    housekeeping.abort();
    result.map_err(|e| Failure::new(format!("the server stopped: {e}"), "see the log above", 1))
}

async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    else {
        let _ = interrupt.await;
        return;
    };
    tokio::select! {
        _ = interrupt => {}
        _ = term.recv() => {}
    }
}
