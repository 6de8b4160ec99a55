//! A real `purko serve` on loopback, a real upstream service that records what it receives,
//! and a client that speaks the API with either token.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri};
use axum::response::IntoResponse;
use serde_json::{Value, json};

pub const OPERATOR: &str = "operator-token-for-tests";
pub const AGENT: &str = "agent-token-for-tests";

/// One request as the upstream saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    pub headers: HeaderMap,
    pub body: String,
}

/// A shop-like HTTP service on loopback, on its own runtime thread.
pub struct Upstream {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Seen>>>,
}

async fn record(
    State(seen): State<Arc<Mutex<Vec<Seen>>>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> impl IntoResponse {
    seen.lock().unwrap().push(Seen {
        method: method.to_string(),
        path: uri.path().to_owned(),
        headers,
        body: String::from_utf8_lossy(&body).into_owned(),
    });
    match (method.as_str(), uri.path()) {
        ("GET", "/items") => (
            StatusCode::OK,
            axum::Json(json!({"items": ["apple", "pear"]})),
        ),
        ("POST", "/orders") => (StatusCode::CREATED, axum::Json(json!({"order_id": 1}))),
        ("POST", "/slow") => {
            tokio::time::sleep(Duration::from_secs(30)).await;
            (StatusCode::CREATED, axum::Json(json!({"order_id": 2})))
        }
        _ => (
            StatusCode::NOT_FOUND,
            axum::Json(json!({"error": "no such path"})),
        ),
    }
}

impl Upstream {
    pub fn start() -> Self {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let state = Arc::clone(&seen);
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let listener = tokio::net::TcpListener::from_std(listener).unwrap();
                let app = Router::new().fallback(record).with_state(state);
                axum::serve(listener, app).await.unwrap();
            });
        });
        Self { port, seen }
    }

    pub fn count(&self, method: &str, path: &str) -> usize {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.method == method && s.path == path)
            .count()
    }

    pub fn requests(&self, path: &str) -> Vec<Seen> {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.path == path)
            .cloned()
            .collect()
    }
}

/// A folder for one test's manifests and state.
pub struct Scratch {
    pub dir: PathBuf,
}

impl Scratch {
    pub fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "purko-serve-{name}-{}-{}",
            std::process::id(),
            ulid_like()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Self { dir }
    }

    pub fn home(&self) -> PathBuf {
        self.dir.join("state")
    }

    pub fn manifest(&self, upstream: &Upstream, autonomy: &str) -> PathBuf {
        let path = self.dir.join("agent.yaml");
        let port = upstream.port;
        std::fs::write(
            &path,
            format!(
                r"apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: shopper
  namespace: test
spec:
  autonomyLevel: {autonomy}
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
      inputSchema:
        type: object
        properties:
          item: {{type: string}}
          quantity: {{type: integer}}
        required: [item, quantity]
      endpoint:
        url: http://127.0.0.1:{port}/orders
        method: POST
    - name: create_slow_order
      type: api
      description: Place an order that takes its time.
      endpoint:
        url: http://127.0.0.1:{port}/slow
        method: POST
        timeoutSeconds: 60
"
            ),
        )
        .unwrap();
        path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ulid_like() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos()
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A running `purko serve`.
pub struct Server {
    pub child: Child,
    pub address: SocketAddr,
    pub home: PathBuf,
}

impl Server {
    pub fn start(manifest: &Path, home: &Path) -> Self {
        Self::start_at(manifest, home, free_port())
    }

    pub fn start_at(manifest: &Path, home: &Path, port: u16) -> Self {
        let address: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let child = Command::new(env!("CARGO_BIN_EXE_purko"))
            .args([
                "serve",
                manifest.to_str().unwrap(),
                "--listen",
                &address.to_string(),
            ])
            .env("PURKO_HOME", home)
            .env("PURKO_OPERATOR_TOKEN", OPERATOR)
            .env("PURKO_AGENT_TOKEN", AGENT)
            .env("PURKO_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let server = Self {
            child,
            address,
            home: home.to_owned(),
        };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(address).is_err() {
            assert!(Instant::now() < deadline, "purko serve did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        server
    }

    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Stops the server the hard way, as a crash would.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Runs a `purko` client command against this server.
    pub fn purko(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_purko"))
            .args(args)
            .args(["--server", &self.url()])
            .env("PURKO_HOME", &self.home)
            .env("PURKO_OPERATOR_TOKEN", OPERATOR)
            .env("PURKO_AGENT_TOKEN", AGENT)
            .output()
            .unwrap()
    }

    /// `purko call` for the test agent; the observation.
    pub fn call(&self, step: &str, name: &str, arguments: &str, wait: bool) -> Value {
        let mut args = vec![
            "call",
            "--agent",
            "test/shopper",
            "--session",
            "s1",
            "--step",
            step,
            name,
            arguments,
        ];
        if !wait {
            args.push("--no-wait");
        }
        let out = self.purko(&args);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// A raw API request; the status and the JSON answer.
    pub fn api(
        &self,
        method: &str,
        path: &str,
        token: Option<&str>,
        body: Option<&str>,
    ) -> (u16, Value) {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            purko_http::install_crypto();
            let client = reqwest::Client::builder().no_proxy().build().unwrap();
            let mut request =
                client.request(method.parse().unwrap(), format!("{}{path}", self.url()));
            if let Some(token) = token {
                request = request.bearer_auth(token);
            }
            if let Some(body) = body {
                request = request
                    .header("content-type", "application/json")
                    .body(body.to_owned());
            }
            let response = request.send().await.unwrap();
            let status = response.status().as_u16();
            let text = response.text().await.unwrap();
            (
                status,
                serde_json::from_str(&text).unwrap_or(Value::String(text)),
            )
        })
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.kill();
    }
}

pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}
