//! What the gateway's tests share: a fresh folder, and a client wired to a server over an
//! in-memory pipe.

use std::path::PathBuf;
use std::time::Duration;

use rmcp::service::RunningService;
use rmcp::{ClientHandler, RoleClient, ServerHandler, ServiceExt};

/// The longest a client waits to connect.
const PATIENCE: Duration = Duration::from_secs(30);

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
