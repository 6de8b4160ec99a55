//! The set-up every test shares: a recording HTTP upstream on loopback, manifests in a fresh
//! folder, and engines built on a real `SQLite` store in that folder.

use std::collections::HashMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::to_bytes;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use purko_config::Manifests;
use purko_engine::{CallRequest, Engine, EngineOptions};
use purko_protocol::{ApprovalId, ApprovalScope, Code, Observation, Status};
use purko_store::{Answer, Decided, SqliteStore};
use serde_json::{Value, json};

/// The longest any test waits for one step; only there so a bug hangs no test run.
pub const PATIENCE: Duration = Duration::from_secs(20);

/// Awaits `future`, failing the test instead of hanging.
pub async fn within<F: Future>(future: F) -> F::Output {
    tokio::time::timeout(PATIENCE, future)
        .await
        .expect("the step finished in time")
}

/// One request as the upstream received it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub query: Option<String>,
    /// Lower-case names.
    pub headers: HashMap<String, String>,
    pub body: String,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).map(String::as_str)
    }

    pub fn json(&self) -> Value {
        serde_json::from_str(&self.body).expect("the body is JSON")
    }
}

type Log = Arc<Mutex<Vec<Seen>>>;

/// An HTTP service on `127.0.0.1` that records every request and answers by path.
#[derive(Debug)]
pub struct Upstream {
    pub port: u16,
    log: Log,
    server: tokio::task::JoinHandle<()>,
}

impl Upstream {
    pub async fn start() -> Self {
        let log = Log::default();
        let app = Router::new().fallback(answer).with_state(log.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("binds a loopback port");
        let port = listener.local_addr().expect("has an address").port();
        let server = tokio::spawn(async move {
            axum::serve(listener, app).await.expect("serves");
        });
        Self { port, log, server }
    }

    /// Every request so far, in arrival order.
    pub fn seen(&self) -> Vec<Seen> {
        self.log.lock().expect("the log").clone()
    }

    /// The requests with this method and path.
    pub fn seen_at(&self, method: &str, path: &str) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| s.method == method && s.path == path)
            .collect()
    }

    /// Waits (a few seconds at most) until a request with this method and path has come.
    pub async fn wait_for(&self, method: &str, path: &str) -> Vec<Seen> {
        for _ in 0..200 {
            let seen = self.seen_at(method, path);
            if !seen.is_empty() {
                return seen;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        panic!(
            "no {method} {path} came; the upstream saw {:?}",
            self.seen()
        );
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.server.abort();
    }
}

async fn answer(State(log): State<Log>, request: Request) -> Response {
    let (parts, body) = request.into_parts();
    let body = to_bytes(body, 1 << 22).await.expect("reads the body");
    let body = String::from_utf8_lossy(&body).into_owned();
    let headers: HashMap<String, String> = parts
        .headers
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    let path = parts.uri.path().to_owned();
    let seen = Seen {
        method: parts.method.to_string(),
        path: path.clone(),
        query: parts.uri.query().map(str::to_owned),
        headers: headers.clone(),
        body: body.clone(),
    };
    let orders = {
        let mut log = log.lock().expect("the log");
        log.push(seen);
        log.iter()
            .filter(|s| s.method == "POST" && s.path == "/orders")
            .count()
    };
    let method = parts.method;
    match (&method, path.as_str()) {
        (&Method::GET, "/items") => axum::Json(json!([
            {"id": "apple", "price": 3},
            {"id": "pear", "price": 4},
        ]))
        .into_response(),
        (&Method::GET, p) if p.starts_with("/items/") => {
            let id = &p["/items/".len()..];
            axum::Json(json!({"id": id, "price": 3})).into_response()
        }
        (&Method::POST, "/orders") => (
            StatusCode::CREATED,
            axum::Json(json!({"order": orders, "received": body_json(&body)})),
        )
            .into_response(),
        (&Method::POST, "/slow") => {
            tokio::time::sleep(Duration::from_millis(300)).await;
            (StatusCode::CREATED, axum::Json(json!({"order": "slow"}))).into_response()
        }
        (&Method::GET, "/limited") => {
            let mut response = (
                StatusCode::TOO_MANY_REQUESTS,
                axum::Json(json!({"error": "slow down"})),
            )
                .into_response();
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("7"));
            response
        }
        (&Method::GET, "/boom") => (
            StatusCode::INTERNAL_SERVER_ERROR,
            axum::Json(json!({"error": "it broke"})),
        )
            .into_response(),
        (_, "/sleepy") => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            axum::Json(json!({"late": true})).into_response()
        }
        (&Method::POST, "/hook") => StatusCode::NO_CONTENT.into_response(),
        (_, "/echo") => axum::Json(json!({"headers": headers, "body": body})).into_response(),
        (&Method::GET, "/big") => axum::Json(json!({"blob": "x".repeat(300_000)})).into_response(),
        (&Method::GET, "/fetch") => {
            axum::Json(json!({"fetched": parts.uri.query()})).into_response()
        }
        _ => (StatusCode::NOT_FOUND, "no such route").into_response(),
    }
}

fn body_json(body: &str) -> Value {
    serde_json::from_str(body).unwrap_or(Value::Null)
}

/// A folder under the system's temp dir, removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let path = std::env::temp_dir().join(format!(
            "purko-engine-test-{}-{}",
            std::process::id(),
            ulid::Ulid::generate()
        ));
        std::fs::create_dir_all(&path).expect("creates the temp dir");
        Self(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A port nothing listens on (bound, then let go).
pub fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("binds");
    listener.local_addr().expect("has an address").port()
}

/// The agents every test can use. `{port}` is the upstream's port, `{closed}` a closed one.
///
/// - `test/shop`, supervised: reads, a write, the `sends_out` `fetch_url`, an `mcp` tool with no
///   backend here, a deny rule, and approvals announced on the upstream's `/hook`.
/// - `test/hasty`, supervised: the same write, with approvals that expire after 1 s.
/// - `test/auto`, full: writes that run without asking, failing routes, `fetch_url` (the URL is
///   a query argument) and `open_url` (the whole URL is the model's).
/// - `test/strict`, full: `fetch_url` with a destinations allow list that admits the upstream.
/// - `test/reader`, restricted: may only read.
const AGENTS: &str = r#"
apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: shop
  namespace: test
spec:
  autonomyLevel: supervised
  tools:
    - name: list_items
      type: api
      description: List the items in the shop.
      endpoint:
        url: http://127.0.0.1:{port}/items
        method: GET
        timeoutSeconds: 10
    - name: get_item
      type: api
      description: Get one item of the shop by its id.
      inputSchema:
        type: object
        properties:
          id: {type: string}
        required: [id]
      endpoint:
        url: http://127.0.0.1:{port}/items/{id}
        method: GET
        timeoutSeconds: 10
    - name: create_order
      type: api
      description: Place an order for an item.
      inputSchema:
        type: object
        properties:
          item: {type: string}
          quantity: {type: integer, minimum: 1, maximum: 100}
        required: [item, quantity]
      endpoint:
        url: http://127.0.0.1:{port}/orders
        method: POST
        timeoutSeconds: 10
    - name: fetch_url
      type: api
      description: Fetch a web page.
      inputSchema:
        type: object
        properties:
          url: {type: string}
        required: [url]
      endpoint:
        url: http://127.0.0.1:{port}/fetch
        method: GET
        timeoutSeconds: 10
    - name: search_code
      type: mcp
  guardrail:
    rules:
      - effect: deny
        tools: ["create_order"]
        args: {item: "forbidden*"}
        reason: "forbidden items are never ordered"
    approvals:
      timeoutSeconds: 600
      webhook:
        url: http://127.0.0.1:{port}/hook
        headers:
          X-Source: purko-test
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: hasty
  namespace: test
spec:
  autonomyLevel: supervised
  tools:
    - name: create_order
      type: api
      description: Place an order for an item.
      inputSchema:
        type: object
        properties:
          item: {type: string}
          quantity: {type: integer}
        required: [item, quantity]
      endpoint:
        url: http://127.0.0.1:{port}/orders
        method: POST
  guardrail:
    approvals:
      timeoutSeconds: 1
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: auto
  namespace: test
spec:
  autonomyLevel: full
  tools:
    - name: create_order
      type: api
      description: Place an order for an item.
      inputSchema:
        type: object
        properties:
          item: {type: string}
          quantity: {type: integer}
        required: [item, quantity]
      endpoint:
        url: http://127.0.0.1:{port}/orders
        method: POST
    - name: slow_order
      type: api
      description: Place an order that takes a while.
      endpoint:
        url: http://127.0.0.1:{port}/slow
        method: POST
    - name: fetch_url
      type: api
      description: Fetch a web page.
      inputSchema:
        type: object
        properties:
          url: {type: string}
        required: [url]
      endpoint:
        url: http://127.0.0.1:{port}/fetch
        method: GET
    - name: limited
      type: api
      endpoint:
        url: http://127.0.0.1:{port}/limited
        method: GET
    - name: boom
      type: api
      endpoint:
        url: http://127.0.0.1:{port}/boom
        method: GET
    - name: sleepy
      type: api
      endpoint:
        url: http://127.0.0.1:{port}/sleepy
        method: GET
        timeoutSeconds: 1
    - name: closed
      type: api
      endpoint:
        url: http://127.0.0.1:{closed}/orders
        method: POST
    - name: list_big
      type: api
      description: List everything there is.
      endpoint:
        url: http://127.0.0.1:{port}/big
        method: GET
    - name: open_url
      type: api
      description: Open a web page.
      inputSchema:
        type: object
        properties:
          url: {type: string}
        required: [url]
      endpoint:
        url: "{url}"
        method: GET
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: strict
  namespace: test
spec:
  autonomyLevel: full
  tools:
    - name: fetch_url
      type: api
      description: Fetch a web page.
      inputSchema:
        type: object
        properties:
          url: {type: string}
        required: [url]
      endpoint:
        url: http://127.0.0.1:{port}/fetch
        method: GET
  guardrail:
    destinations:
      allow: ["https://docs.example.com/*", "http://127.0.0.1:{port}/*"]
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: reader
  namespace: test
spec:
  autonomyLevel: restricted
  tools:
    - name: list_items
      type: api
      description: List the items in the shop.
      endpoint:
        url: http://127.0.0.1:{port}/items
        method: GET
    - name: create_order
      type: api
      description: Place an order for an item.
      endpoint:
        url: http://127.0.0.1:{port}/orders
        method: POST
"#;

/// An upstream, a folder with the manifests and the store, and a way to build engines on them.
#[derive(Debug)]
pub struct Harness {
    pub upstream: Upstream,
    pub dir: TempDir,
    pub manifests: Manifests,
}

impl Harness {
    /// The shared agents.
    pub async fn start() -> Self {
        Self::with("").await
    }

    /// The shared agents and `extra` manifest documents (with `{port}` filled in as well).
    pub async fn with(extra: &str) -> Self {
        let upstream = Upstream::start().await;
        let dir = TempDir::new();
        let mut text = AGENTS.to_owned();
        if !extra.is_empty() {
            text.push_str("---\n");
            text.push_str(extra);
        }
        let text = text
            .replace("{port}", &upstream.port.to_string())
            .replace("{closed}", &closed_port().to_string());
        let path = dir.path().join("agents.yaml");
        std::fs::write(&path, text).expect("writes the manifests");
        let manifests = purko_config::load(&[path]).expect("the manifests load");
        Self {
            upstream,
            dir,
            manifests,
        }
    }

    /// Where the store lives.
    pub fn state(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// A new engine (a new "process") on the same store file.
    pub async fn engine(&self) -> Arc<Engine> {
        let store = SqliteStore::open(&self.state()).expect("opens the store");
        let engine = Engine::new(&self.manifests, Arc::new(store), EngineOptions::default())
            .await
            .expect("the engine starts");
        Arc::new(engine)
    }

    /// The URL of a path on the upstream.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.upstream.port)
    }
}

/// A call that does not wait for a person.
pub fn call(agent: &str, session: &str, step: &str, name: &str, arguments: Value) -> CallRequest {
    CallRequest {
        agent: agent.to_owned(),
        session: session.to_owned(),
        step: step.to_owned(),
        name: name.to_owned(),
        arguments,
        idempotency_key: None,
        wait: Some(false),
    }
}

/// Runs a call, failing the test if the engine itself fails.
pub async fn run(engine: &Arc<Engine>, request: CallRequest) -> Observation {
    within(engine.call(request))
        .await
        .expect("the engine answers")
}

/// Approves, as the operator would.
pub async fn approve(engine: &Engine, id: &ApprovalId, scope: ApprovalScope) -> Decided {
    let answer = Answer::Approve {
        scope,
        comment: None,
        by: "operator".into(),
    };
    within(engine.answer(id, answer))
        .await
        .expect("the answer is stored")
}

/// Rejects, as the operator would.
pub async fn reject(engine: &Engine, id: &ApprovalId, reason: &str) -> Decided {
    let answer = Answer::Reject {
        reason: Some(reason.to_owned()),
        by: "operator".into(),
    };
    within(engine.answer(id, answer))
        .await
        .expect("the answer is stored")
}

/// The approval id of a pending observation.
pub fn pending_id(o: &Observation) -> ApprovalId {
    assert_eq!(o.status, Status::Pending, "{o:#?}");
    o.approval_id
        .clone()
        .expect("a pending call names its approval")
}

/// Asserts an error-like observation with this status and code, and the fields every refusal
/// carries: a message, a remediation and a decision id.
pub fn assert_refused(o: &Observation, status: Status, code: Code) {
    assert_eq!((o.status, o.code), (status, Some(code)), "{o:#?}");
    assert!(
        o.message.as_deref().is_some_and(|m| !m.is_empty()),
        "no message: {o:#?}"
    );
    assert!(
        o.remediation.as_deref().is_some_and(|m| !m.is_empty()),
        "no remediation: {o:#?}"
    );
    assert!(o.decision_id.is_some(), "no decision id: {o:#?}");
}
