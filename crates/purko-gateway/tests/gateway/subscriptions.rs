//! Changes upstreams announce, through the gateway. Resource subscriptions to the npm
//! `server-everything`, which tells its subscribers of changes once its
//! `toggle-subscriber-updates` tool is called: a client before 2026-07-28 subscribes with
//! `resources/subscribe` and hears on its session; a 2026-07-28 client opens a
//! `subscriptions/listen` stream. List changes from the scripted server of purko-mcp's tests,
//! which announces them on demand, to a client whose agent sees it and one whose agent does not.

use std::path::PathBuf;
use std::sync::Arc;

use purko_engine::Engine;
use purko_gateway::Gateway;
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProtocolVersion,
    ResourceUpdatedNotificationParam, ServerNotification, SubscribeRequestParams,
    SubscriptionFilter, UnsubscribeRequestParams,
};
use rmcp::service::NotificationContext;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, ClientLifecycleMode, ClientServiceExt, RoleClient};
use serde_json::{Map, Value};
use tokio::sync::mpsc;

use crate::support::PATIENCE;

const TEXT: &str = "demo://resource/dynamic/text/1";

struct Upstream {
    dir: PathBuf,
    engine: Arc<Engine>,
}

impl Upstream {
    /// An engine for `manifests` in a folder of its own.
    async fn with(manifests: &str) -> Self {
        let dir = crate::support::temp_dir("subscriptions");
        let path = dir.join("manifests.yaml");
        std::fs::write(&path, manifests).unwrap();
        let engine = crate::support::engine(path, &dir.join("state")).await;
        Self { dir, engine }
    }

    /// The npm `server-everything` seen by the agent `test/all`.
    async fn start() -> Self {
        Self::with(&format!(
            r"apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: everything, namespace: test}}
spec: {{transport: stdio, command: node, args: ['{}', stdio]}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: all, namespace: test}}
spec: {{autonomyLevel: supervised}}
",
            crate::support::peer("server-everything").display(),
        ))
        .await
    }

    /// The server starts telling its subscribers of changes (the server's own doing: the
    /// call goes to it directly, not through an agent).
    async fn start_updates(&self) {
        let started = self
            .engine
            .registry()
            .call(
                "toggle-subscriber-updates",
                Map::<String, Value>::new(),
                None,
            )
            .await;
        assert!(started.is_success(), "{started:#?}");
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A client on 2025-11-25 that reports the resource changes it hears.
#[derive(Clone)]
struct Before2026 {
    heard: mpsc::UnboundedSender<String>,
}

impl ClientHandler for Before2026 {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let _ = self.heard.send(params.uri);
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("subscriber", "1.0.0"),
        )
        .with_protocol_version(ProtocolVersion::V_2025_11_25)
    }
}

#[tokio::test]
#[expect(
    deprecated,
    reason = "resources/subscribe is how clients before 2026-07-28 subscribe"
)]
async fn clients_before_2026_hear_of_a_resource_they_subscribed_to() {
    let upstream = Upstream::start().await;
    let connect = || async {
        let (heard, hear) = mpsc::unbounded_channel();
        let gateway = Gateway::new(Arc::clone(&upstream.engine), "test/all").unwrap();
        let client = crate::support::connect(gateway, Before2026 { heard }).await;
        client
            .peer()
            .subscribe(SubscribeRequestParams::new(TEXT))
            .await
            .unwrap();
        (client, hear)
    };
    let (client, mut hear) = connect().await;
    let (other, mut other_hears) = connect().await;
    let subscriptions = || upstream.engine.registry().servers()[0].subscriptions;
    assert_eq!(subscriptions(), 1, "two clients, one subscription upstream");
    upstream.start_updates().await;
    for hear in [&mut hear, &mut other_hears] {
        let uri = tokio::time::timeout(PATIENCE, hear.recv())
            .await
            .expect("no change was heard")
            .unwrap();
        assert_eq!(uri, TEXT);
    }
    // One client leaves; the server was asked once for both, and goes on telling the other.
    other
        .peer()
        .unsubscribe(UnsubscribeRequestParams::new(TEXT))
        .await
        .unwrap();
    while hear.try_recv().is_ok() {}
    while other_hears.try_recv().is_ok() {}
    let next = tokio::time::timeout(PATIENCE, hear.recv())
        .await
        .expect("the client still subscribed hears no more changes")
        .unwrap();
    assert_eq!(next, TEXT);
    assert!(
        other_hears.try_recv().is_err(),
        "a client that unsubscribed is not told"
    );
    let _ = other.cancel().await;
    assert_eq!(subscriptions(), 1);

    // A resource no server has cannot be subscribed to.
    let refused = client
        .peer()
        .subscribe(SubscribeRequestParams::new("demo://no/such/resource"))
        .await
        .unwrap_err();
    assert!(
        refused.to_string().contains(
            "no MCP server this agent sees can tell of changes to 'demo://no/such/resource'"
        ),
        "{refused}"
    );
    // The last subscriber's session ends without unsubscribing: its subscription goes too.
    let _ = client.cancel().await;
    tokio::time::timeout(PATIENCE, async {
        while subscriptions() > 0 {
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the subscription was given back");
}

#[tokio::test]
async fn a_2026_client_hears_on_its_listen_stream() {
    let upstream = Upstream::start().await;
    // The 2026-07-28 revision, over streamable HTTP as `purko serve` mounts it.
    let service = purko_gateway::http_service(Arc::clone(&upstream.engine), "test/all").unwrap();
    let app = axum::Router::new().nest_service("/mcp/test/all", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    let transport =
        StreamableHttpClientTransport::from_config(StreamableHttpClientTransportConfig::with_uri(
            format!("http://127.0.0.1:{port}/mcp/test/all"),
        ));
    let lifecycle = ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    };
    let client = tokio::time::timeout(PATIENCE, ().serve_with_lifecycle(transport, lifecycle))
        .await
        .unwrap()
        .unwrap();
    let filter = SubscriptionFilter::builder()
        .resource_subscriptions([TEXT.to_owned()])
        .build();
    let mut stream = tokio::time::timeout(PATIENCE, client.peer().listen(filter))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        stream.acknowledged().resource_subscriptions.as_deref(),
        Some(&[TEXT.to_owned()][..])
    );
    upstream.start_updates().await;
    let heard = tokio::time::timeout(PATIENCE, stream.next())
        .await
        .expect("no change was heard")
        .unwrap()
        .expect("the stream is open");
    match heard {
        ServerNotification::ResourceUpdatedNotification(updated) => {
            assert_eq!(updated.params.uri, TEXT);
        }
        other => panic!("heard {other:?}"),
    }
    stream.cancel().await.unwrap();
    let _ = client.cancel().await;
}

#[tokio::test]
#[expect(
    deprecated,
    reason = "resources/subscribe is how clients before 2026-07-28 subscribe"
)]
async fn a_subscription_is_asked_again_of_a_restarted_server() {
    let upstream = Upstream::start().await;
    let (heard, mut hear) = mpsc::unbounded_channel();
    let gateway = Gateway::new(Arc::clone(&upstream.engine), "test/all").unwrap();
    let client = crate::support::connect(gateway, Before2026 { heard }).await;
    client
        .peer()
        .subscribe(SubscribeRequestParams::new(TEXT))
        .await
        .unwrap();
    let registry = upstream.engine.registry();
    let status = |registry: &purko_mcp::Registry| registry.servers()[0].clone();
    let pid = status(registry).pid.expect("a stdio server has a pid");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let mut changes = registry.changes();
    tokio::time::timeout(PATIENCE, async {
        loop {
            let now = status(registry);
            if now.state == purko_mcp::ServerState::Ready && now.pid != Some(pid) {
                return;
            }
            changes.changed().await.unwrap();
        }
    })
    .await
    .expect("the server came back");
    // The new process knows nothing of the subscription but what Purko asks again.
    upstream.start_updates().await;
    let uri = tokio::time::timeout(PATIENCE, hear.recv())
        .await
        .expect("no change was heard after the restart")
        .unwrap();
    assert_eq!(uri, TEXT);
    let _ = client.cancel().await;
}

#[tokio::test]
async fn list_changes_reach_the_clients_whose_agent_sees_the_server() {
    let scripted = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../purko-mcp/tests/mcp/fixtures/scripted.mjs");
    let sdk = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/node_modules/@modelcontextprotocol/sdk");
    let upstream = Upstream::with(&format!(
        r"apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: scripted, namespace: test}}
spec: {{transport: stdio, command: node, args: ['{}', '{}']}}
---
apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: everything, namespace: test}}
spec: {{transport: stdio, command: node, args: ['{}', stdio]}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: all, namespace: test}}
spec: {{autonomyLevel: supervised}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: echoer, namespace: test}}
spec:
  autonomyLevel: supervised
  tools:
    - {{name: echo, type: mcp}}
",
        scripted.canonicalize().unwrap().display(),
        sdk.canonicalize()
            .expect("the SDK is installed: run npm ci --prefix peers")
            .display(),
        crate::support::peer("server-everything").display(),
    ))
    .await;
    let engine = &upstream.engine;
    let listen = |agent: &str| {
        let (heard, hear) = mpsc::unbounded_channel();
        let gateway = Gateway::new(Arc::clone(engine), agent).unwrap();
        (gateway, crate::support::Listener { heard }, hear)
    };
    let (gateway, listener, mut hear) = listen("test/all");
    let all = crate::support::connect(gateway, listener).await;
    let (gateway, listener, mut elsewhere) = listen("test/echoer");
    let echoer = crate::support::connect(gateway, listener).await;
    // `initialized` reaches the gateway after the handshake: a round trip makes sure of it.
    all.peer().list_tools(None).await.unwrap();
    echoer.peer().list_tools(None).await.unwrap();

    let announced = engine
        .registry()
        .call("announce", Map::<String, Value>::new(), None)
        .await;
    assert!(announced.is_success(), "{announced:#?}");
    let mut said = Vec::new();
    for _ in 0..2 {
        let heard = tokio::time::timeout(PATIENCE, hear.recv())
            .await
            .expect("a list change was not heard")
            .unwrap();
        said.push(heard);
    }
    said.sort();
    assert_eq!(said, ["prompts/list_changed", "resources/list_changed"]);
    // The other agent sees only the everything server: it is not told of the scripted one's.
    echoer.peer().list_tools(None).await.unwrap();
    assert!(elsewhere.try_recv().is_err(), "{:?}", elsewhere.try_recv());
    let _ = all.cancel().await;
    let _ = echoer.cancel().await;
}
