//! purko-mcp against real MCP servers: the npm reference servers installed in `peers/` (run
//! `npm ci --prefix peers`), and a small server built on the official TypeScript SDK for what
//! they cannot show.

mod everything;
mod filesystem;
mod robustness;
mod scripted;

use std::path::{Path, PathBuf};
use std::time::Duration;

use purko_mcp::{Registry, ServerSpec, ServerState, ServerStatus, Transport};
use purko_protocol::Observation;
use serde_json::{Map, Value};

/// Against hangs only; nothing asserts how long anything took.
const PATIENCE: Duration = Duration::from_mins(1);

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A package under `peers/node_modules/@modelcontextprotocol/`; fails (never skips) when the
/// peers are not installed.
fn peer(package: &str) -> PathBuf {
    let dir = workspace()
        .join("peers/node_modules/@modelcontextprotocol")
        .join(package);
    assert!(
        dir.join("package.json").exists(),
        "{} is missing: run npm ci --prefix peers (from the workspace root)",
        dir.display()
    );
    dir
}

fn node(args: Vec<String>) -> Transport {
    Transport::Stdio {
        command: "node".into(),
        args,
        env: vec![],
        cwd: None,
    }
}

fn everything() -> Transport {
    node(vec![
        peer("server-everything")
            .join("dist/index.js")
            .display()
            .to_string(),
        "stdio".into(),
    ])
}

fn memory() -> Transport {
    node(vec![
        peer("server-memory")
            .join("dist/index.js")
            .display()
            .to_string(),
    ])
}

fn filesystem(dir: &Path) -> Transport {
    node(vec![
        peer("server-filesystem")
            .join("dist/index.js")
            .display()
            .to_string(),
        dir.display().to_string(),
    ])
}

fn scripted() -> Transport {
    node(vec![
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/mcp/fixtures/scripted.mjs")
            .display()
            .to_string(),
        peer("sdk").display().to_string(),
    ])
}

/// The scripted server over streamable HTTP on a port of its own, once it listens, and its
/// process, killed when dropped.
async fn scripted_http() -> (Transport, tokio::process::Child) {
    let port = free_port();
    let server = tokio::process::Command::new("node")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mcp/fixtures/scripted.mjs"))
        .arg(peer("sdk"))
        .args(["--http", &port.to_string()])
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    listening(port).await;
    let transport = Transport::Http {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: vec![],
    };
    (transport, server)
}

/// Waits until something listens on `port`.
async fn listening(port: u16) {
    tokio::time::timeout(PATIENCE, async {
        while tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap_or_else(|_| panic!("nothing listens on port {port}"));
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

fn spec(name: &str, transport: Transport) -> ServerSpec {
    let mut spec = ServerSpec::new(name, transport);
    spec.startup_timeout = Duration::from_secs(30);
    spec.tool_timeout = Duration::from_secs(30);
    spec
}

async fn started(specs: Vec<ServerSpec>) -> Registry {
    let registry = Registry::start(specs);
    registry.ready(PATIENCE).await;
    registry
}

fn status(registry: &Registry, name: &str) -> ServerStatus {
    registry
        .servers()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("no server {name}"))
}

fn assert_ready(registry: &Registry, name: &str) -> ServerStatus {
    let s = status(registry, name);
    assert_eq!(s.state, ServerState::Ready, "{s:#?}");
    s
}

/// Waits until `done` holds for the servers, or panics after [`PATIENCE`].
async fn wait_for(registry: &Registry, what: &str, done: impl Fn(&[ServerStatus]) -> bool) {
    let mut changes = registry.changes();
    let waited = tokio::time::timeout(PATIENCE, async {
        loop {
            if done(&registry.servers()) {
                return;
            }
            tokio::select! {
                _ = changes.changed() => {}
                () = tokio::time::sleep(Duration::from_millis(100)) => {}
            }
        }
    })
    .await;
    assert!(
        waited.is_ok(),
        "timed out waiting for {what}: {:#?}",
        registry.servers()
    );
}

fn args(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        other => panic!("not an object: {other}"),
    }
}

fn exposed(registry: &Registry) -> Vec<String> {
    registry.tools().iter().map(|t| t.exposed.clone()).collect()
}

/// The first text content of a successful observation.
fn text(observation: &Observation) -> String {
    assert!(observation.is_success(), "{observation:#?}");
    observation.observation.as_ref().expect("an observation")["content"][0]["text"]
        .as_str()
        .expect("text content")
        .to_owned()
}
