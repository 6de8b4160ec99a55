//! The egress proxy: the sandbox's only way out. It listens on 127.0.0.1:3128 inside the
//! sandbox's network namespace (the socket is created there and handed to Purko), and serves
//! HTTP proxy requests from Purko's side: `CONNECT host:port` for HTTPS, absolute-form
//! `GET http://...` for HTTP.
//!
//! Invariant: every connection goes to an address [`Egress::resolve`] checked for that very
//! destination (a `CONNECT` target is checked as `https://host:port/`), and a tunnel carries
//! TLS only; a refusal is answered `403` with the guard's reason, before anything is connected.

use std::net::SocketAddr;
use std::time::Duration;

use purko_http::Egress;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use url::Url;

/// The longest request head accepted.
const MAX_HEAD: usize = 16 << 10;
/// Connections served at once.
const MAX_CONNECTIONS: usize = 32;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Serves until dropped (the runner aborts it when the sandbox ends, which ends every tunnel).
pub(crate) async fn serve(listener: std::net::TcpListener, egress: Egress) {
    if listener.set_nonblocking(true).is_err() {
        return;
    }
    let Ok(listener) = TcpListener::from_std(listener) else {
        return;
    };
    let mut connections = JoinSet::new();
    loop {
        let Ok((client, _)) = listener.accept().await else {
            return;
        };
        while connections.try_join_next().is_some() {}
        if connections.len() >= MAX_CONNECTIONS {
            drop(client);
            continue;
        }
        let egress = egress.clone();
        connections.spawn(async move {
            if let Err(e) = handle(client, &egress).await {
                tracing::debug!(error = %e, "sandbox proxy connection ended");
            }
        });
    }
}

async fn handle(mut client: TcpStream, egress: &Egress) -> std::io::Result<()> {
    let (head, rest) = read_head(&mut client).await?;
    let Some((method, target, lines)) = parse_head(&head) else {
        return answer(
            &mut client,
            400,
            "Purko's proxy could not read this request.",
        )
        .await;
    };
    if method.eq_ignore_ascii_case("CONNECT") {
        let url = format!("https://{target}/");
        let Some(mut upstream) = open(&mut client, egress, &url).await? else {
            return Ok(());
        };
        client
            .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            .await?;
        // A tunnel is for TLS: the first byte a client sends is a handshake record (22).
        let mut first = rest;
        if first.is_empty() {
            let mut byte = [0u8; 1];
            if client.read(&mut byte).await? == 0 {
                return Ok(());
            }
            first.push(byte[0]);
        }
        if first[0] != 22 {
            return Ok(());
        }
        upstream.write_all(&first).await?;
        tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
        return Ok(());
    }
    if !target.starts_with("http://") {
        return answer(
            &mut client,
            400,
            "Purko's proxy takes CONNECT for https and absolute http:// URLs; nothing else leaves the sandbox.",
        )
        .await;
    }
    let Ok(url) = Url::parse(target) else {
        return answer(&mut client, 400, "Purko's proxy could not parse this URL.").await;
    };
    let Some(mut upstream) = open(&mut client, egress, url.as_str()).await? else {
        return Ok(());
    };
    let mut path = url.path().to_owned();
    if let Some(query) = url.query() {
        path.push('?');
        path.push_str(query);
    }
    // The Host header names what was checked, whatever the client wrote.
    let host = match (url.host_str(), url.port()) {
        (Some(host), Some(port)) => format!("{host}:{port}"),
        (Some(host), None) => host.to_owned(),
        (None, _) => String::new(),
    };
    let mut forwarded = format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\n");
    for line in lines {
        let name = line.split(':').next().unwrap_or("").trim();
        if [
            "host",
            "proxy-connection",
            "proxy-authorization",
            "connection",
            "keep-alive",
        ]
        .iter()
        .any(|n| name.eq_ignore_ascii_case(n))
        {
            continue;
        }
        forwarded.push_str(line);
        forwarded.push_str("\r\n");
    }
    forwarded.push_str("Connection: close\r\n\r\n");
    upstream.write_all(forwarded.as_bytes()).await?;
    upstream.write_all(&rest).await?;
    tokio::io::copy_bidirectional(&mut client, &mut upstream).await?;
    Ok(())
}

/// Checks and resolves `url` through the guard and connects to a checked address; answers the
/// client itself (403 or 502) and returns `None` when it cannot.
async fn open(
    client: &mut TcpStream,
    egress: &Egress,
    url: &str,
) -> std::io::Result<Option<TcpStream>> {
    let Ok(parsed) = Url::parse(url) else {
        let text = "Purko's proxy could not parse this destination.";
        answer(client, 400, text).await?;
        return Ok(None);
    };
    let addresses: Vec<SocketAddr> = match egress.resolve(&parsed).await {
        Ok(addresses) => addresses,
        Err(blocked) => {
            answer(client, 403, &blocked.to_string()).await?;
            return Ok(None);
        }
    };
    for address in addresses {
        if let Ok(Ok(stream)) =
            tokio::time::timeout(CONNECT_TIMEOUT, TcpStream::connect(address)).await
        {
            return Ok(Some(stream));
        }
    }
    answer(
        client,
        502,
        "Purko's proxy could not connect to the destination.",
    )
    .await?;
    Ok(None)
}

async fn answer(client: &mut TcpStream, status: u16, body: &str) -> std::io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Bad Gateway",
    };
    let body = format!("{body}\n");
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

/// Reads up to the end of the request head; returns the head and whatever followed it.
async fn read_head(client: &mut TcpStream) -> std::io::Result<(String, Vec<u8>)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 2048];
    loop {
        let read = client.read(&mut chunk).await?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            let head = String::from_utf8_lossy(&buffer[..end]).into_owned();
            return Ok((head, rest));
        }
        if buffer.len() > MAX_HEAD {
            return Err(std::io::ErrorKind::InvalidData.into());
        }
    }
}

/// The method, the target and the header lines of a request head.
fn parse_head(head: &str) -> Option<(&str, &str, impl Iterator<Item = &str>)> {
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?;
    let target = first.next()?;
    first.next().filter(|v| v.starts_with("HTTP/1."))?;
    Some((method, target, lines.filter(|l| !l.is_empty())))
}
