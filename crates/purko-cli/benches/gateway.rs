//! What Purko adds to an MCP `tools/call`: the same client calls the npm `server-everything`
//! upstream directly and through Purko, in the same run, over stdio (`purko gateway --stdio`)
//! and over streamable HTTP (`purko serve`'s `/mcp/<ns>/<name>`, with the upstream registered
//! over HTTP too), with every judgement step on.
//! The tool is `echo`, marked `read_only` in the server's catalogue, so the call runs at once.
//!
//! Prints the medians of each and their difference and ratio, then the throughput of sixteen
//! HTTP sessions sharing one stdio upstream with Purko's CPU per call and resident memory;
//! needs `npm ci --prefix peers`.
//! Run with `cargo bench -p purko-cli --bench gateway`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::model::ProtocolVersion;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::json;

const CALLS: usize = 3_000;
const WARM_UP: usize = 300;

fn everything() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(path.exists(), "run npm ci --prefix peers first");
    path.canonicalize().expect("a path")
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("a port")
        .local_addr()
        .expect("an address")
        .port()
}

/// One of the bench's clients.
#[derive(Clone, Copy)]
enum Client<'a> {
    Mcp(&'a RunningService<RoleClient, ()>),
    Session(&'a RawSession),
    Stateless(&'a Stateless),
}

impl Client<'_> {
    async fn echo(self, n: u64) {
        match self {
            Self::Mcp(client) => {
                let params = CallToolRequestParams::new("echo").with_arguments(
                    json!({"message": "hi"})
                        .as_object()
                        .cloned()
                        .expect("an object"),
                );
                let result = client.call_tool(params).await.expect("echo answers");
                assert_ne!(result.is_error, Some(true), "{result:?}");
            }
            Self::Session(session) => session.echo(n).await,
            Self::Stateless(client) => client.echo(n).await,
        }
    }
}

/// The median call of `direct` and of `through`, taken in alternate runs of `BLOCK` calls:
/// each side warm, as under back-to-back calls, and whatever the machine or the upstream does
/// meanwhile weighs on both alike.
async fn medians(direct: Client<'_>, through: Client<'_>) -> (f64, f64) {
    const BLOCK: usize = 10;
    for n in 0..WARM_UP as u64 {
        direct.echo(n).await;
        through.echo(n).await;
    }
    let mut times = (Vec::with_capacity(CALLS), Vec::with_capacity(CALLS));
    let mut n = WARM_UP as u64;
    while times.0.len() < CALLS {
        for (client, times) in [(direct, &mut times.0), (through, &mut times.1)] {
            for _ in 0..BLOCK {
                let started = Instant::now();
                client.echo(n).await;
                times.push(started.elapsed());
                n += 1;
            }
        }
    }
    let median = |mut times: Vec<Duration>| {
        times.sort();
        times[times.len() / 2].as_secs_f64() * 1e6
    };
    (median(times.0), median(times.1))
}

/// An rmcp client that speaks the newest revision, 2026-07-28 (no session; every request
/// self-contained), where the server offers it, and the older handshake where it does not: the
/// same client for both arms of a comparison.
async fn newest(
    transport: StreamableHttpClientTransport<reqwest::Client>,
) -> RunningService<RoleClient, ()> {
    ().serve_with_lifecycle(
        transport,
        ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: None,
        },
    )
    .await
    .expect("an MCP client")
}

/// One line of medians. `front` is the client over streamable HTTP through `purko serve` to the
/// stdio upstream, against the client calling that upstream directly over stdio: what Purko's
/// HTTP side adds without the npm server's own HTTP in the picture (the HTTP client's own cost
/// included). `front-session` is the same on a 2025-11-25 session spoken with plain requests,
/// `front-plain` on the 2026-07-28 revision spoken with plain requests, and `front-general` the
/// same requests made to miss Purko's fast path.
fn report(transport: &str, direct: f64, purko: f64) {
    eprintln!(
        "{transport:<6} direct {direct:8.1} µs   through purko {purko:8.1} µs   added {:7.1} µs   ratio {:.2}",
        purko - direct,
        purko / direct
    );
}

/// Sixteen MCP sessions over streamable HTTP calling one stdio upstream through `purko serve`
/// for ten seconds: calls per second, Purko's CPU time per call, its resident memory.
#[expect(
    clippy::cast_precision_loss,
    reason = "counts and ticks far below 2^52"
)]
async fn throughput(purko: &str, manifest: &Path, work: &Path) {
    const CLIENTS: usize = 16;
    const SECONDS: u64 = 10;
    let port = free_port();
    let server = serve(purko, manifest, &work.join("load-state"), port);
    let pid = server.id().expect("a pid");
    wait_for_port(port).await;
    let http = pooled();
    let url = format!("http://127.0.0.1:{port}/mcp/bench/bench");
    let mut sessions = Vec::new();
    for _ in 0..CLIENTS {
        sessions.push(RawSession::open(&http, &url).await);
    }
    let cpu_before = cpu_ticks(pid);
    let started = Instant::now();
    let stop = started + Duration::from_secs(SECONDS);
    let mut tasks = Vec::new();
    for session in sessions {
        tasks.push(tokio::spawn(async move {
            let mut calls = 0u64;
            while Instant::now() < stop {
                session.echo(calls).await;
                calls += 1;
            }
            calls
        }));
    }
    let mut calls = 0u64;
    for task in tasks {
        calls += task.await.expect("a client");
    }
    let elapsed = started.elapsed().as_secs_f64();
    let cpu = (cpu_ticks(pid) - cpu_before) as f64 / 100.0;
    let rss = rss_kib(pid);
    eprintln!(
        "load   {CLIENTS} HTTP sessions, one stdio upstream: {:.0} calls/s, Purko CPU {:.1} µs per call, RSS {:.1} MB",
        calls as f64 / elapsed,
        cpu / calls as f64 * 1e6,
        rss as f64 / 1024.0
    );
}

/// An MCP session over streamable HTTP spoken with plain requests: the load's clients should
/// cost little next to the gateway they measure (rmcp's client parses and re-serialises every
/// message through its typed model and its task per session).
struct RawSession {
    http: reqwest::Client,
    url: String,
    id: String,
}

impl RawSession {
    const PROTOCOL: &str = "2025-11-25";

    async fn open(http: &reqwest::Client, url: &str) -> Self {
        let initialize = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": Self::PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "load", "version": "0"}}});
        let answer = http
            .post(url)
            .bearer_auth("bench-agent")
            .header("accept", "application/json, text/event-stream")
            .json(&initialize)
            .send()
            .await
            .expect("initialize");
        assert!(answer.status().is_success(), "{answer:?}");
        let id = answer
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .expect("a session id")
            .to_owned();
        let _ = answer.bytes().await;
        let session = Self {
            http: http.clone(),
            url: url.to_owned(),
            id,
        };
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let answer = session
            .post(initialized.to_string())
            .send()
            .await
            .expect("initialized");
        assert!(answer.status().is_success(), "{answer:?}");
        session
    }

    fn post(&self, body: String) -> reqwest::RequestBuilder {
        self.http
            .post(&self.url)
            .bearer_auth("bench-agent")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-session-id", &self.id)
            .header("mcp-protocol-version", Self::PROTOCOL)
            .body(body)
    }

    async fn echo(&self, n: u64) {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"echo","arguments":{{"message":"hi"}}}}}}"#,
            n + 1
        );
        let answer = self.post(call).send().await.expect("tools/call");
        assert!(answer.status().is_success(), "{answer:?}");
        let body = answer.bytes().await.expect("a body");
        assert!(succeeded(&body), "{}", String::from_utf8_lossy(&body));
    }
}

/// Calls on the 2026-07-28 revision, which has no session: every request carries the protocol
/// version, the client's capabilities and identity in `_meta`, and the routing headers.
struct Stateless {
    http: reqwest::Client,
    url: String,
    name_header: &'static str,
}

impl Stateless {
    const PROTOCOL: &str = "2026-07-28";

    fn new(http: &reqwest::Client, url: &str, name_header: &'static str) -> Self {
        Self {
            http: http.clone(),
            url: url.to_owned(),
            name_header,
        }
    }

    async fn echo(&self, n: u64) {
        let call = json!({"jsonrpc": "2.0", "id": n + 1, "method": "tools/call", "params": {
            "name": "echo", "arguments": {"message": "hi"},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": Self::PROTOCOL,
                "io.modelcontextprotocol/clientCapabilities": {},
                "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "0"}}}});
        let answer = self
            .http
            .post(&self.url)
            .bearer_auth("bench-agent")
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .header("mcp-protocol-version", Self::PROTOCOL)
            .header("mcp-method", "tools/call")
            .header("mcp-name", self.name_header)
            .body(call.to_string())
            .send()
            .await
            .expect("tools/call");
        assert!(answer.status().is_success(), "{answer:?}");
        let body = answer.bytes().await.expect("a body");
        assert!(succeeded(&body), "{}", String::from_utf8_lossy(&body));
    }
}

/// Whether an answer is a successful tool result (not a JSON-RPC error, not `isError: true`).
fn succeeded(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    text.contains("\"result\"") && !text.contains("\"isError\":true")
}

/// `tools/list` through `purko gateway --stdio` for an agent that sees ten upstreams of 100
/// tools each: answered from the registry's cache and the agent's precomputed view.
async fn many_tools(purko: &str, work: &Path) {
    const SERVERS: usize = 10;
    const TOOLS: usize = 100;
    const LISTS: usize = 300;
    let peers = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../peers/node_modules/@modelcontextprotocol/sdk");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/many_tools.mjs");
    let mut yaml = String::new();
    for i in 0..SERVERS {
        let _ = write!(
            yaml,
            "apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: s{i}, namespace: bench}}
spec:
  transport: stdio
  command: node
  args: ['{}', '{}', 's{i}', '{TOOLS}']
---
",
            script.display(),
            peers.display()
        );
    }
    yaml.push_str(
        "apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {name: many, namespace: bench}
spec:
  autonomyLevel: full
",
    );
    let manifest = work.join("many.yaml");
    std::fs::write(&manifest, yaml).expect("a manifest");
    let mut gateway = tokio::process::Command::new(purko);
    gateway
        .args(["gateway", "--stdio", "--agent", "bench/many"])
        .arg(&manifest)
        .env("PURKO_HOME", work.join("many-state"))
        .env("PURKO_LOG", "error")
        .stderr(Stdio::null());
    let client = ().serve(TokioChildProcess::new(gateway).expect("purko")).await.expect("purko");
    // Ten node processes start at once: wait until every upstream's tools are in.
    let deadline = Instant::now() + Duration::from_mins(1);
    while client.list_all_tools().await.expect("a list").len() < SERVERS * TOOLS {
        assert!(Instant::now() < deadline, "not every upstream came up");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let mut times = Vec::with_capacity(LISTS);
    for _ in 0..LISTS {
        let started = Instant::now();
        let tools = client.list_all_tools().await.expect("a list");
        times.push(started.elapsed());
        assert_eq!(tools.len(), SERVERS * TOOLS);
    }
    times.sort();
    let through = times[LISTS / 2].as_secs_f64() * 1e3;
    let _ = client.cancel().await;
    let answered = answer_times(purko, &manifest, &work.join("many-state")).await;

    // The same number of tools from one upstream, listed directly: what the client's own
    // parsing and the transport cost.
    let mut node = tokio::process::Command::new("node");
    node.arg(&script)
        .arg(&peers)
        .arg("all")
        .arg((SERVERS * TOOLS).to_string())
        .stderr(Stdio::null());
    let direct = ().serve(TokioChildProcess::new(node).expect("node")).await.expect("direct");
    let mut times = Vec::with_capacity(LISTS);
    for _ in 0..LISTS {
        let started = Instant::now();
        let tools = direct.list_all_tools().await.expect("a list");
        times.push(started.elapsed());
        assert_eq!(tools.len(), SERVERS * TOOLS);
    }
    times.sort();
    let alone = times[LISTS / 2].as_secs_f64() * 1e3;
    let _ = direct.cancel().await;
    eprintln!(
        "list   tools/list of {} tools: from {SERVERS} upstreams through purko gateway --stdio {through:.2} ms, from one upstream directly {alone:.2} ms, added {:.2} ms",
        SERVERS * TOOLS,
        through - alone
    );
    eprintln!(
        "list   answered by purko gateway --stdio (request written to answer read, not parsed): {answered:.2} ms"
    );
}

/// The median time from writing `tools/list` to `purko gateway --stdio` to reading the whole
/// answer, unparsed: how long Purko takes to answer from its cache, without a client's parsing.
async fn answer_times(purko: &str, manifest: &Path, state: &Path) -> f64 {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    const LISTS: usize = 300;
    let mut gateway = tokio::process::Command::new(purko)
        .args(["gateway", "--stdio", "--agent", "bench/many"])
        .arg(manifest)
        .env("PURKO_HOME", state)
        .env("PURKO_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("purko");
    let mut input = gateway.stdin.take().expect("stdin");
    let mut output = BufReader::new(gateway.stdout.take().expect("stdout"));
    let mut line = String::new();
    input
        .write_all(
            concat!(
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}}"#,
                "\n",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                "\n"
            )
            .as_bytes(),
        )
        .await
        .expect("initialize");
    output.read_line(&mut line).await.expect("initialized");
    let list = concat!(r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, "\n").as_bytes();
    let mut times = Vec::with_capacity(LISTS);
    let deadline = Instant::now() + Duration::from_mins(1);
    while times.len() < LISTS {
        line.clear();
        let started = Instant::now();
        input.write_all(list).await.expect("tools/list");
        output.read_line(&mut line).await.expect("an answer");
        let elapsed = started.elapsed();
        // Until every upstream's tools are in (ten node processes start at once).
        if line.matches(r#""inputSchema""#).count() == 1000 {
            times.push(elapsed);
        } else {
            assert!(Instant::now() < deadline, "not every upstream came up");
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }
    times.sort();
    times[LISTS / 2].as_secs_f64() * 1e3
}

/// `purko serve` on `port` with the bench's tokens, killed when dropped.
fn serve(purko: &str, manifest: &Path, state: &Path, port: u16) -> tokio::process::Child {
    tokio::process::Command::new(purko)
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .arg(manifest)
        .env("PURKO_HOME", state)
        .env("PURKO_LOG", "error")
        .env("PURKO_AGENT_TOKEN", "bench-agent")
        .env("PURKO_OPERATOR_TOKEN", "bench-operator")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("purko serve")
}

async fn wait_for_port(port: u16) {
    let deadline = Instant::now() + Duration::from_mins(1);
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "port {port} never opened");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A client that keeps its connections, as the Python SDK's httpx and browsers do (rmcp's
/// default client opens one per request).
fn pooled() -> reqwest::Client {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .expect("a client")
}

/// utime + stime of a process, in clock ticks (100 per second on Linux).
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let after = stat.rsplit_once(')').map_or("", |(_, rest)| rest);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |i: usize| {
        fields
            .get(i)
            .and_then(|v| v.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // Fields 14 and 15 of stat; `after` starts at field 3.
    field(11) + field(12)
}

fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    // `cargo bench` passes --bench; this is a plain harness-less program.
    purko_http::install_crypto();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    let work = std::env::temp_dir().join(format!("purko-gateway-bench-{}", std::process::id()));
    std::fs::create_dir_all(&work).expect("a folder");
    let manifest = work.join("bench.yaml");
    std::fs::write(
        &manifest,
        format!(
            "apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: everything, namespace: bench}}
spec:
  transport: stdio
  command: node
  args: ['{}', 'stdio']
  catalogue:
    echo: {{read_only: true}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: bench, namespace: bench}}
spec:
  autonomyLevel: supervised
",
            everything().display()
        ),
    )
    .expect("a manifest");
    let purko = env!("CARGO_BIN_EXE_purko");

    // `cargo bench -p purko-cli --bench gateway -- load list` runs only those parts.
    let asked: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let part = |name: &str| asked.is_empty() || asked.iter().any(|a| a == name);
    runtime.block_on(async {
        if part("stdio") {
            stdio(purko, &manifest, &work).await;
        }
        if part("http") {
            http(purko, &work).await;
        }
        if part("load") {
            throughput(purko, &manifest, &work).await;
        }
        if part("list") {
            many_tools(purko, &work).await;
        }
    });
    let _ = std::fs::remove_dir_all(&work);
}

/// The median `tools/call` directly and through `purko gateway --stdio`.
async fn stdio(purko: &str, manifest: &Path, work: &Path) {
    let mut node = tokio::process::Command::new("node");
    node.arg(everything()).arg("stdio").stderr(Stdio::null());
    let direct = ().serve(TokioChildProcess::new(node).expect("node")).await.expect("direct");
    let mut gateway = tokio::process::Command::new(purko);
    gateway
        .args(["gateway", "--stdio", "--agent", "bench/bench"])
        .arg(manifest)
        .env("PURKO_HOME", work.join("stdio-state"))
        .env("PURKO_LOG", "error")
        .stderr(Stdio::null());
    let through = ().serve(TokioChildProcess::new(gateway).expect("purko")).await.expect("purko");
    let (d, p) = medians(Client::Mcp(&direct), Client::Mcp(&through)).await;
    report("stdio", d, p);
    let _ = through.cancel().await;

    // Purko's HTTP front alone: the client over streamable HTTP to `purko serve`, whose
    // upstream is the same stdio server, against the stdio client calling it directly.
    let port = free_port();
    let _serve = serve(purko, manifest, &work.join("front-state"), port);
    wait_for_port(port).await;
    let config = StreamableHttpClientTransportConfig::with_uri(format!(
        "http://127.0.0.1:{port}/mcp/bench/bench"
    ))
    .auth_header("bench-agent");
    let front = newest(StreamableHttpClientTransport::with_client(pooled(), config)).await;
    let (d, p) = medians(Client::Mcp(&direct), Client::Mcp(&front)).await;
    report("front", d, p);
    let _ = front.cancel().await;
    // The same with a 2025-11-25 session (the path older clients take), spoken plainly.
    let url = format!("http://127.0.0.1:{port}/mcp/bench/bench");
    let session = RawSession::open(&pooled(), &url).await;
    let (d, p) = medians(Client::Mcp(&direct), Client::Session(&session)).await;
    report("front-session", d, p);
    // The newest revision spoken with plain requests, as the Python SDK sends them: once as
    // sent, and once with the tool's name Base64-encoded in `Mcp-Name`, which Purko leaves to
    // rmcp's general path (the same call, the same answer): what Purko's fast path saves.
    let plain = Stateless::new(&pooled(), &url, "echo");
    let (d, p) = medians(Client::Mcp(&direct), Client::Stateless(&plain)).await;
    report("front-plain", d, p);
    let encoded = Stateless::new(&pooled(), &url, "=?base64?ZWNobw==?=");
    let (d, p) = medians(Client::Mcp(&direct), Client::Stateless(&encoded)).await;
    report("front-general", d, p);
    let _ = direct.cancel().await;
}

/// The median `tools/call` directly and through `purko serve`'s gateway, over streamable HTTP
/// with kept connections, the upstream being the npm server over HTTP too.
async fn http(purko: &str, work: &Path) {
    let upstream_port = free_port();
    let mut node = tokio::process::Command::new("node");
    node.arg(everything())
        .arg("streamableHttp")
        .env("PORT", upstream_port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true);
    let _upstream = node.spawn().expect("node over HTTP");
    // Purko's upstream is the same HTTP server the direct client calls.
    let over_http = work.join("bench-http.yaml");
    std::fs::write(
        &over_http,
        format!(
            "apiVersion: purko.io/v1alpha1
kind: MCPServer
metadata: {{name: everything, namespace: bench}}
spec:
  transport: http
  url: 'http://127.0.0.1:{upstream_port}/mcp'
  catalogue:
    echo: {{read_only: true}}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {{name: bench, namespace: bench}}
spec:
  autonomyLevel: supervised
"
        ),
    )
    .expect("a manifest");
    wait_for_port(upstream_port).await;
    let purko_port = free_port();
    let _serve = serve(purko, &over_http, &work.join("http-state"), purko_port);
    wait_for_port(purko_port).await;
    let direct = newest(StreamableHttpClientTransport::with_client(
        pooled(),
        StreamableHttpClientTransportConfig::with_uri(format!(
            "http://127.0.0.1:{upstream_port}/mcp"
        )),
    ))
    .await;
    let config = StreamableHttpClientTransportConfig::with_uri(format!(
        "http://127.0.0.1:{purko_port}/mcp/bench/bench"
    ))
    .auth_header("bench-agent");
    let through = newest(StreamableHttpClientTransport::with_client(
        pooled(),
        config.clone(),
    ))
    .await;
    let (d, p) = medians(Client::Mcp(&direct), Client::Mcp(&through)).await;
    report("http", d, p);
    let _ = through.cancel().await;
    // The same client on the 2025-11-25 handshake through Purko too, as it speaks to the npm
    // server: Purko's own cost, without the newer revision's extra work in the client.
    let session =
        ().serve(StreamableHttpClientTransport::with_client(pooled(), config))
            .await
            .expect("an MCP client");
    let (d, p) = medians(Client::Mcp(&direct), Client::Mcp(&session)).await;
    report("http-session", d, p);
    let _ = direct.cancel().await;
    let _ = session.cancel().await;
}
