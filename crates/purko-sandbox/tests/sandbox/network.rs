//! `networkAccess: true`: HTTP and HTTPS through Purko's proxy and its egress guard only.
//! Every destination here is on loopback; blocked ones are refused before any connect.

use pretty_assertions::assert_eq;
use purko_config::Language;
use purko_http::Egress;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::support::{config, plan};

async fn fetch(egress: &Egress, code: &str) -> purko_sandbox::Outcome {
    let planned = plan(Language::Python, &config(10, 10_000, &[], true));
    purko_sandbox::run(&planned, code, Some(egress))
        .await
        .expect("runs")
}

const FETCH: &str = "import sys, urllib.request, urllib.error\n\
for url in sys.argv[1:] or URLS:\n\
\x20   try:\n\
\x20       print(url, urllib.request.urlopen(url, timeout=5).read().decode())\n\
\x20   except urllib.error.HTTPError as e:\n\
\x20       print(url, e.code, e.read().decode().strip())\n\
\x20   except Exception as e:\n\
\x20       print(url, 'failed', e)\n";

#[tokio::test(flavor = "multi_thread")]
async fn loopback_and_metadata_are_refused_by_the_guard() {
    let egress = Egress::new(&[]).expect("a guard");
    let code = format!(
        "URLS = ['http://127.0.0.1:9/', 'http://169.254.169.254/latest/meta-data/', 'http://localhost/']\n{FETCH}"
    );
    let outcome = fetch(&egress, &code).await;
    let lines: Vec<&str> = outcome.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{outcome:?}");
    assert!(
        lines[0].starts_with("http://127.0.0.1:9/ 403 Purko refused"),
        "{outcome:?}"
    );
    assert!(
        lines[1].contains("403") && lines[1].contains("metadata"),
        "{outcome:?}"
    );
    assert!(
        lines[2].contains("403") && lines[2].contains("loopback"),
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tunnel_to_a_blocked_address_is_refused() {
    let egress = Egress::new(&[]).expect("a guard");
    let code = format!("URLS = ['https://127.0.0.1:443/', 'https://169.254.169.254/']\n{FETCH}");
    let outcome = fetch(&egress, &code).await;
    assert_eq!(
        outcome
            .stdout
            .matches("Tunnel connection failed: 403")
            .count(),
        2,
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn an_admitted_destination_is_fetched_through_the_proxy() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("a loopback port");
    let port = listener.local_addr().expect("bound").port();
    let server = tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.expect("a connection");
        let mut head = vec![0u8; 4096];
        let read = stream.read(&mut head).await.expect("a request");
        let request = String::from_utf8_lossy(&head[..read]).into_owned();
        stream
            .write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello")
            .await
            .expect("answered");
        request
    });
    let egress = Egress::new(&[format!("127.0.0.1:{port}")]).expect("a guard");
    let code = format!("URLS = ['http://127.0.0.1:{port}/path?q=1']\n{FETCH}");
    let outcome = fetch(&egress, &code).await;
    assert_eq!(
        outcome.stdout,
        format!("http://127.0.0.1:{port}/path?q=1 hello\n"),
        "{outcome:?}"
    );
    let request = server.await.expect("served");
    assert!(
        request.starts_with(&format!(
            "GET /path?q=1 HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        )),
        "{request}"
    );
    assert_eq!(
        request.to_ascii_lowercase().matches("host:").count(),
        1,
        "{request}"
    );
    assert!(!request.to_ascii_lowercase().contains("proxy-connection"));
}

#[tokio::test(flavor = "multi_thread")]
async fn only_the_proxy_is_reachable_inside() {
    let egress = Egress::new(&[]).expect("a guard");
    let outcome = fetch(
        &egress,
        "import socket\n\
         for port in [3128, 22, 80]:\n\
         \x20   try:\n\
         \x20       socket.create_connection(('127.0.0.1', port), timeout=2).close()\n\
         \x20       print(port, 'connected')\n\
         \x20   except OSError as e:\n\
         \x20       print(port, 'refused', e.errno)\n",
    )
    .await;
    // Landlock ABI 4 refuses the connect itself (EACCES); without it nothing listens there.
    let errno = if crate::support::host().landlock_abi >= Some(4) {
        13
    } else {
        111
    };
    assert_eq!(
        outcome.stdout,
        format!("3128 connected\n22 refused {errno}\n80 refused {errno}\n"),
        "{outcome:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn network_access_needs_the_guard() {
    let planned = plan(Language::Python, &config(10, 10_000, &[], true));
    let error = purko_sandbox::run(&planned, "pass", None)
        .await
        .expect_err("no egress guard");
    assert!(error.to_string().contains("no egress guard"));
}
