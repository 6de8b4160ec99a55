//! What the gateway's tests share: a fresh folder, an engine over a real store, a person's
//! yes, and clients: one wired to a server over an in-memory pipe, one that reports what it
//! hears unasked.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use purko_engine::{Engine, EngineOptions};
use purko_protocol::{Approval, ApprovalId, ApprovalScope, ApprovalStatus};
use purko_store::{Answer, ApprovalFilter, SqliteStore};
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::{ClientHandler, RoleClient, ServerHandler, ServiceError, ServiceExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// Against hangs only (connecting, a call waiting for its approval); nothing asserts how long
/// anything took.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// A new empty folder under the system's temporary folder.
pub fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "purko-{what}-test-{}-{}",
        std::process::id(),
        ulid::Ulid::generate()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `client` connected to `server` over `tokio::io::duplex`; the server runs on its own task.
pub async fn connect<S, C>(server: S, client: C) -> RunningService<RoleClient, C>
where
    S: ServerHandler,
    C: ClientHandler,
{
    let (server_end, client_end) = tokio::io::duplex(1 << 20);
    tokio::spawn(async move {
        let running = server.serve(server_end).await.unwrap();
        let _ = running.waiting().await;
    });
    tokio::time::timeout(PATIENCE, client.serve(client_end))
        .await
        .unwrap()
        .unwrap()
}

/// An engine for the manifests in `manifests`, its store in the folder `state`.
pub async fn engine(manifests: PathBuf, state: &Path) -> Arc<Engine> {
    let manifests = purko_config::load(&[manifests]).unwrap();
    let store = SqliteStore::open(state).unwrap();
    Arc::new(
        Engine::new(&manifests, Arc::new(store), EngineOptions::default())
            .await
            .unwrap(),
    )
}

/// An operator's yes to the approval `id`, for this call once.
pub async fn approve(engine: &Engine, id: &ApprovalId) {
    engine
        .answer(
            id,
            Answer::Approve {
                scope: ApprovalScope::Once,
                comment: None,
                by: "operator".into(),
            },
        )
        .await
        .unwrap();
}

/// An operator's yes to `id`, then the call `waiting` held for it, which succeeds.
pub async fn approve_and_finish(
    engine: &Engine,
    id: &ApprovalId,
    waiting: JoinHandle<Result<CallToolResult, ServiceError>>,
) {
    approve(engine, id).await;
    let done = tokio::time::timeout(PATIENCE, waiting)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(done.is_error, Some(false), "{done:?}");
}

/// A client that cannot elicit and reports every progress message and list change it hears.
#[derive(Clone)]
pub struct Listener {
    pub heard: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Listener {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.heard.send(params.message.unwrap_or_default());
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.heard.send("tools/list_changed".into());
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.heard.send("resources/list_changed".into());
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.heard.send("prompts/list_changed".into());
    }
}

/// The first approval waiting for `agent`, if any.
pub async fn pending(engine: &Engine, agent: &str) -> Option<Approval> {
    let pending = engine
        .store()
        .approvals(&ApprovalFilter {
            status: Some(ApprovalStatus::Pending),
            agent: Some(agent.into()),
            limit: 10,
        })
        .await
        .unwrap();
    pending.into_iter().next()
}

/// An order desk on loopback that takes every `POST /orders`; its port.
pub async fn order_desk() -> u16 {
    let desk = axum::Router::new().route(
        "/orders",
        axum::routing::post(|| async { axum::Json(serde_json::json!({"order": 1})) }),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, desk).await.unwrap() });
    port
}

/// The entry point of the npm reference server `package` (installed by `npm ci --prefix peers`).
pub fn peer(package: &str) -> PathBuf {
    let server = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!(
        "../../peers/node_modules/@modelcontextprotocol/{package}/dist/index.js"
    ));
    assert!(
        server.exists(),
        "the MCP reference servers are missing: run npm ci --prefix peers"
    );
    server.canonicalize().unwrap()
}

/// The names of the tools `client` is shown.
pub async fn tool_names<C: ClientHandler>(client: &RunningService<RoleClient, C>) -> Vec<String> {
    client
        .list_all_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name.into_owned())
        .collect()
}
