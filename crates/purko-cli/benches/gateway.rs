//! What Purko adds to an MCP `tools/call`: the same client calls the npm `server-everything`
//! upstream directly and through Purko, in the same run, over stdio (`purko gateway --stdio`)
//! and over streamable HTTP (`purko serve`'s `/mcp/<ns>/<name>`, with the upstream registered
//! over HTTP too), with every judgement step on.
//! The tool is `echo`, marked `read_only` in the server's catalogue, so the call runs at once.
//!
//! Prints the medians of each and their difference and ratio; needs `npm ci --prefix peers`.
//! Run with `cargo bench -p purko-cli --bench gateway`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
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

async fn medians(client: &RunningService<RoleClient, ()>) -> f64 {
    let params = || {
        CallToolRequestParams::new("echo").with_arguments(
            json!({"message": "hi"})
                .as_object()
                .cloned()
                .expect("an object"),
        )
    };
    for _ in 0..WARM_UP {
        client.call_tool(params()).await.expect("echo answers");
    }
    let mut times = Vec::with_capacity(CALLS);
    for _ in 0..CALLS {
        let started = Instant::now();
        let result = client.call_tool(params()).await.expect("echo answers");
        times.push(started.elapsed());
        assert_ne!(result.is_error, Some(true), "{result:?}");
    }
    times.sort();
    times[CALLS / 2].as_secs_f64() * 1e6
}

fn report(transport: &str, direct: f64, purko: f64) {
    eprintln!(
        "{transport:<6} direct {direct:8.1} µs   through purko {purko:8.1} µs   added {:7.1} µs   ratio {:.2}",
        purko - direct,
        purko / direct
    );
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

    runtime.block_on(async {
        // stdio
        let mut node = tokio::process::Command::new("node");
        node.arg(everything()).arg("stdio").stderr(Stdio::null());
        let direct = ().serve(TokioChildProcess::new(node).expect("node")).await.expect("direct");
        let mut gateway = tokio::process::Command::new(purko);
        gateway
            .args(["gateway", "--stdio", "--agent", "bench/bench"])
            .arg(&manifest)
            .env("PURKO_HOME", work.join("stdio-state"))
            .env("PURKO_LOG", "error")
            .stderr(Stdio::null());
        let through =
            ().serve(TokioChildProcess::new(gateway).expect("purko"))
                .await
                .expect("purko");
        let d = medians(&direct).await;
        let p = medians(&through).await;
        report("stdio", d, p);
        let _ = direct.cancel().await;
        let _ = through.cancel().await;

        // streamable HTTP
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
        let deadline = Instant::now() + Duration::from_mins(1);
        while tokio::net::TcpStream::connect(("127.0.0.1", upstream_port))
            .await
            .is_err()
        {
            assert!(Instant::now() < deadline, "the upstream never listened");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let purko_port = free_port();
        let _serve = tokio::process::Command::new(purko)
            .args(["serve", "--listen", &format!("127.0.0.1:{purko_port}")])
            .arg(&over_http)
            .env("PURKO_HOME", work.join("http-state"))
            .env("PURKO_LOG", "error")
            .env("PURKO_AGENT_TOKEN", "bench-agent")
            .env("PURKO_OPERATOR_TOKEN", "bench-operator")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("purko serve");
        for port in [upstream_port, purko_port] {
            let deadline = Instant::now() + Duration::from_mins(1);
            while tokio::net::TcpStream::connect(("127.0.0.1", port))
                .await
                .is_err()
            {
                assert!(Instant::now() < deadline, "port {port} never opened");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        let direct = ()
            .serve(StreamableHttpClientTransport::from_uri(format!(
                "http://127.0.0.1:{upstream_port}/mcp"
            )))
            .await
            .expect("direct over HTTP");
        let config = StreamableHttpClientTransportConfig::with_uri(format!(
            "http://127.0.0.1:{purko_port}/mcp/bench/bench"
        ))
        .auth_header("bench-agent");
        let through =
            ().serve(StreamableHttpClientTransport::from_config(config))
                .await
                .expect("purko over HTTP");
        let d = medians(&direct).await;
        let p = medians(&through).await;
        report("http", d, p);
        let _ = direct.cancel().await;
        let _ = through.cancel().await;
    });
    let _ = std::fs::remove_dir_all(&work);
}
