//! The gateway over streamable HTTP on the 2026-07-28 revision: the fast path answers calls as
//! rmcp's own path would, streams a waiting call's progress before its result, and leaves every
//! request it does not take to rmcp, whose errors the client then gets.

use std::path::PathBuf;
use std::sync::Arc;

use axum::Router;
use purko_engine::Engine;
use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientLifecycleMode, ClientServiceExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::support::PATIENCE;

const REVISION: &str = "2026-07-28";

/// An order desk on loopback, an engine over a real store, and `purko serve`'s gateway routes
/// for two agents: `test/open` (every call runs) and `test/shop` (a write waits for a yes).
struct Front {
    dir: PathBuf,
    engine: Arc<Engine>,
    port: u16,
}

impl Front {
    async fn start() -> Self {
        let desk_port = crate::support::order_desk().await;
        let dir = crate::support::temp_dir("http");
        let path = dir.join("agents.yaml");
        let tool = format!(
            "  tools:
    - name: create_order
      type: api
      description: Place an order for an item.
      endpoint: {{url: 'http://127.0.0.1:{desk_port}/orders', method: POST}}
"
        );
        std::fs::write(
            &path,
            format!(
                "apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: open, namespace: test}}
spec:
  autonomyLevel: full
{tool}---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: shop, namespace: test}}
spec:
  autonomyLevel: supervised
{tool}"
            ),
        )
        .unwrap();
        let engine = crate::support::engine(path, &dir.join("state")).await;
        let mut app = Router::new();
        for agent in ["test/open", "test/shop"] {
            let service = purko_gateway::http_service(Arc::clone(&engine), agent).unwrap();
            app = app.nest_service(&format!("/mcp/{agent}"), service);
        }
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        Self { dir, engine, port }
    }

    /// The decisions recorded for `agent`, newest first.
    async fn decisions(&self, agent: &str) -> Vec<purko_store::DecisionRecord> {
        self.engine
            .store()
            .decisions(&purko_store::DecisionFilter {
                agent: Some(agent.into()),
                limit: 10,
                ..Default::default()
            })
            .await
            .unwrap()
    }

    fn url(&self, agent: &str) -> String {
        format!("http://127.0.0.1:{}/mcp/{agent}", self.port)
    }

    /// A 2026-07-28 `tools/call` of `create_order` sent as the Python SDK sends it, with
    /// `name_header` as its `Mcp-Name`.
    async fn post(&self, agent: &str, name_header: &str, body: &Value) -> reqwest::Response {
        reqwest::Client::new()
            .post(self.url(agent))
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", REVISION)
            .header("mcp-method", "tools/call")
            .header("mcp-name", name_header)
            .body(body.to_string())
            .send()
            .await
            .unwrap()
    }
}

impl Drop for Front {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn order(id: u64, name: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": name, "arguments": {"item": "pear"},
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": REVISION,
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"}}}})
}

/// The answer without what differs between two runs of the same call: its decision id.
fn without_decision(mut answer: Value) -> Value {
    let structured = &mut answer["result"]["structuredContent"];
    assert!(
        structured["decision_id"].is_string(),
        "no decision id in {answer}"
    );
    structured["decision_id"] = Value::Null;
    answer
}

#[tokio::test]
async fn a_call_on_the_newest_revision_is_answered_alike_on_the_fast_path_and_on_rmcps() {
    let front = Front::start().await;
    // `Mcp-Name` as plain text takes the fast path; Base64-encoded, the same name takes rmcp's.
    let fast = front
        .post("test/open", "create_order", &order(1, "create_order"))
        .await;
    let general = front
        .post(
            "test/open",
            "=?base64?Y3JlYXRlX29yZGVy?=",
            &order(1, "create_order"),
        )
        .await;
    for answer in [&fast, &general] {
        assert_eq!(answer.status(), 200);
        assert_eq!(answer.headers()["content-type"], "application/json");
    }
    let fast: Value = fast.json().await.unwrap();
    let general: Value = general.json().await.unwrap();
    assert_eq!(fast["result"]["isError"], false, "{fast}");
    assert_eq!(fast["result"]["resultType"], "complete", "{fast}");
    assert_eq!(without_decision(fast), without_decision(general));
}

#[tokio::test]
async fn requests_the_fast_path_leaves_get_rmcps_answers() {
    let front = Front::start().await;
    // A name header that contradicts the body.
    let contradicted = front
        .post("test/open", "delete_everything", &order(1, "create_order"))
        .await;
    assert_eq!(contradicted.status(), 400);
    let text = contradicted.text().await.unwrap();
    assert!(text.contains("Mcp-Name"), "{text}");
    // A body that is not JSON.
    let broken = reqwest::Client::new()
        .post(front.url("test/open"))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-protocol-version", REVISION)
        .header("mcp-method", "tools/call")
        .header("mcp-name", "create_order")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":"#)
        .send()
        .await
        .unwrap();
    assert!(broken.status().is_client_error(), "{broken:?}");
    // `_meta` without the keys the revision requires.
    let mut bare = order(2, "create_order");
    bare["params"]["_meta"] = json!({});
    let bare = front.post("test/open", "create_order", &bare).await;
    assert_eq!(bare.status(), 400);
    let text = bare.text().await.unwrap();
    assert!(text.contains("protocolVersion"), "{text}");
    // Nothing above ran: the desk took no order.
    let decisions = front.decisions("test/open").await;
    assert!(decisions.is_empty(), "{decisions:?}");
}

#[tokio::test]
async fn on_2026_a_waiting_call_streams_its_progress_then_its_result_to_rmcps_client() {
    waiting_call_streams_progress(ClientLifecycleMode::Discover {
        preferred_versions: vec![ProtocolVersion::V_2026_07_28],
    })
    .await;
}

#[tokio::test]
async fn in_a_2025_session_a_waiting_call_streams_its_progress_then_its_result() {
    waiting_call_streams_progress(ClientLifecycleMode::Initialize).await;
}

/// rmcp's client, which cannot elicit, calls a write that waits for a person: it hears the
/// call's progress naming the approval, and its result once an operator says yes.
async fn waiting_call_streams_progress(lifecycle: ClientLifecycleMode) {
    let front = Front::start().await;
    let (heard, mut hear) = mpsc::unbounded_channel();
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(front.url("test/shop")),
    );
    let client = tokio::time::timeout(
        PATIENCE,
        crate::support::Listener { heard }.serve_with_lifecycle(transport, lifecycle),
    )
    .await
    .unwrap()
    .unwrap();
    let client = Arc::new(client);
    let waiting = {
        let client = Arc::clone(&client);
        // rmcp's client gives every request a progress token.
        tokio::spawn(async move {
            client
                .call_tool(
                    CallToolRequestParams::new("create_order")
                        .with_arguments(json!({"item": "pear"}).as_object().unwrap().clone()),
                )
                .await
        })
    };
    let said = tokio::time::timeout(PATIENCE, hear.recv())
        .await
        .expect("no progress was heard")
        .unwrap();
    let approval = crate::support::pending(&front.engine, "test/shop")
        .await
        .expect("an approval is waiting");
    assert!(said.contains(approval.id.as_str()), "{said}");
    crate::support::approve_and_finish(&front.engine, &approval.id, waiting).await;
}

/// An MCP session on 2025-11-25 spoken with plain requests; `capabilities` are the client's.
async fn session(front: &Front, agent: &str, capabilities: Value) -> String {
    let http = reqwest::Client::new();
    let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": capabilities,
        "clientInfo": {"name": "test", "version": "0"}}});
    let answer = http
        .post(front.url(agent))
        .header("accept", "application/json, text/event-stream")
        .json(&initialize)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    let id = answer.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let initialized = legacy_post(front, agent, &id)
        .body(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}).to_string())
        .send()
        .await
        .unwrap();
    assert!(initialized.status().is_success());
    id
}

fn legacy_post(front: &Front, agent: &str, session: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(front.url(agent))
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-11-25")
}

fn legacy_order(id: u64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "create_order", "arguments": {"item": "pear"}}})
    .to_string()
}

#[tokio::test]
async fn calls_in_a_2025_session_whose_client_cannot_elicit_take_the_fast_path_and_count_steps() {
    let front = Front::start().await;
    let id = session(&front, "test/open", json!({})).await;
    for n in 1..=2 {
        let answer = legacy_post(&front, "test/open", &id)
            .body(legacy_order(n))
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), 200);
        // rmcp answers a session's request with an event stream; the fast path with JSON.
        assert_eq!(answer.headers()["content-type"], "application/json");
        let answer: Value = answer.json().await.unwrap();
        assert_eq!(answer["result"]["isError"], false, "{answer}");
    }
    // The session's own step counter: the calls are steps 1 and 2 of `mcp-<session id>`.
    let decisions = front.decisions("test/open").await;
    let mut steps: Vec<(String, String)> = decisions
        .iter()
        .map(|d| (d.session.clone(), d.step.clone()))
        .collect();
    steps.sort();
    let session = format!("mcp-{id}");
    assert_eq!(
        steps,
        [(session.clone(), "1".to_owned()), (session, "2".to_owned())]
    );
    // A closed session, and an unknown one, are rmcp's to refuse.
    let closed = reqwest::Client::new()
        .delete(front.url("test/open"))
        .header("mcp-session-id", &id)
        .header("mcp-protocol-version", "2025-11-25")
        .send()
        .await
        .unwrap();
    assert!(closed.status().is_success(), "{closed:?}");
    let after = legacy_post(&front, "test/open", &id)
        .body(legacy_order(3))
        .send()
        .await
        .unwrap();
    assert_eq!(after.status(), 404);
    let unknown = legacy_post(&front, "test/open", "no-such-session")
        .body(legacy_order(3))
        .send()
        .await
        .unwrap();
    assert_eq!(unknown.status(), 404);
}

#[tokio::test]
async fn a_2025_session_whose_client_can_elicit_stays_on_rmcps_path() {
    let front = Front::start().await;
    let id = session(&front, "test/open", json!({"elicitation": {}})).await;
    let answer = legacy_post(&front, "test/open", &id)
        .body(legacy_order(1))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert_eq!(answer.headers()["content-type"], "text/event-stream");
    let text = answer.text().await.unwrap();
    assert!(text.contains(r#""isError":false"#), "{text}");
}

#[tokio::test]
async fn on_2026_only_the_request_state_purko_sealed_answers_an_approval() {
    let front = Front::start().await;
    let call = |id: u64, state: Option<&str>| {
        let mut body = order(id, "create_order");
        body["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"elicitation": {"form": {}}});
        if let Some(state) = state {
            body["params"]["requestState"] = json!(state);
            body["params"]["inputResponses"] =
                json!({"purko_approval": {"action": "accept", "content": {"approve": true}}});
        }
        body
    };
    let asked: Value = front
        .post("test/shop", "create_order", &call(1, None))
        .await
        .json()
        .await
        .unwrap();
    let state = asked["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {asked}"))
        .to_owned();
    let approval = crate::support::pending(&front.engine, "test/shop")
        .await
        .expect("an approval is waiting");
    // The approval's id alone (as the dashboard shows it), or with a seal that is not Purko's.
    let (named, seal) = state.rsplit_once('.').expect("a sealed state");
    assert!(named.ends_with(approval.id.as_str()), "{state}");
    let mut forged_seal = seal.to_owned();
    forged_seal.replace_range(..1, if seal.starts_with('0') { "1" } else { "0" });
    for forged in [named.to_owned(), format!("{named}.{forged_seal}")] {
        let refused: Value = front
            .post("test/shop", "create_order", &call(2, Some(&forged)))
            .await
            .json()
            .await
            .unwrap();
        let message = refused["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("requestState"), "{refused}");
    }
    let still = crate::support::pending(&front.engine, "test/shop").await;
    assert_eq!(
        still.map(|a| a.id),
        Some(approval.id),
        "nothing answered it"
    );
    let done: Value = front
        .post("test/shop", "create_order", &call(3, Some(&state)))
        .await
        .json()
        .await
        .unwrap();
    assert_eq!(done["result"]["isError"], json!(false), "{done}");
}
