//! server-everything over stdio and over streamable HTTP.

use pretty_assertions::assert_eq;
use purko_mcp::{Registry, ServerState};
use purko_protocol::{Code, Status};
use serde_json::json;

use crate::{
    PATIENCE, args, assert_ready, everything, exposed, peer, spec, started, text, wait_for,
};

#[tokio::test]
async fn everything_over_stdio_lists_its_tools_and_echoes() {
    let registry = started(vec![spec("everything", everything())]).await;
    let status = assert_ready(&registry, "everything");
    assert_eq!(status.protocol_version.as_deref(), Some("2025-11-25"));
    assert!(status.pid.is_some());
    let names = exposed(&registry);
    for name in ["echo", "get-sum", "get-env"] {
        assert!(
            names.iter().any(|n| n == name),
            "{name} missing from {names:?}"
        );
    }
    assert_eq!(status.tool_count, names.len());
    let echo = registry
        .tools()
        .iter()
        .find(|t| t.exposed == "echo")
        .cloned()
        .unwrap();
    assert_eq!(echo.server, "everything");
    assert_eq!(
        echo.spec.annotations.and_then(|a| a.read_only_hint),
        Some(true)
    );

    let answer = registry
        .call("echo", args(json!({"message": "hello"})), Some("k-1"))
        .await;
    assert_eq!(text(&answer), "Echo: hello");
    assert_eq!(
        answer.observation.unwrap()["content"],
        json!([{"type": "text", "text": "Echo: hello"}])
    );
    registry.shutdown().await;
}

#[tokio::test]
async fn invalid_arguments_and_unknown_tools_become_observations() {
    let registry = started(vec![spec("everything", everything())]).await;
    let answer = registry
        .call("echo", args(json!({"message": 42})), None)
        .await;
    assert_eq!(answer.status, Status::Error, "{answer:#?}");
    assert_eq!(answer.code, Some(Code::UpstreamError), "{answer:#?}");
    assert!(answer.remediation.is_some());

    let missing = registry.call("ecoh", args(json!({})), None).await;
    assert_eq!(missing.code, Some(Code::ToolNotFound), "{missing:#?}");
    assert!(missing.remediation.unwrap().contains("'echo'"));
    registry.shutdown().await;
}

#[tokio::test]
async fn structured_content_is_kept() {
    let registry = started(vec![spec("everything", everything())]).await;
    let answer = registry
        .call(
            "get-structured-content",
            args(json!({"location": "New York"})),
            None,
        )
        .await;
    assert!(answer.is_success(), "{answer:#?}");
    let observation = answer.observation.unwrap();
    assert!(
        observation["structuredContent"].is_object(),
        "{observation}"
    );
    assert!(observation["content"].is_array(), "{observation}");
    registry.shutdown().await;
}

#[tokio::test]
async fn a_slow_call_times_out_as_upstream_timeout() {
    let mut s = spec("everything", everything());
    s.tool_timeout = std::time::Duration::from_millis(300);
    let registry = started(vec![s]).await;
    let answer = registry
        .call(
            "trigger-long-running-operation",
            args(json!({"duration": 30, "steps": 3})),
            None,
        )
        .await;
    assert_eq!(answer.code, Some(Code::UpstreamTimeout), "{answer:#?}");
    // The session survives a timeout.
    assert_eq!(
        text(
            &registry
                .call("echo", args(json!({"message": "x"})), None)
                .await
        ),
        "Echo: x"
    );
    registry.shutdown().await;
}

#[tokio::test]
async fn everything_over_streamable_http() {
    let port = crate::free_port();
    let mut server = tokio::process::Command::new("node")
        .arg(peer("server-everything").join("dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let http = purko_mcp::Transport::Http {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: vec![("X-Api-Key".into(), "hunter2-secret".into())],
    };
    let registry = Registry::start(vec![spec("remote", http)]);
    // The server may not listen yet: the registry retries until it does.
    wait_for(&registry, "the HTTP server to be ready", |s| {
        s[0].state == ServerState::Ready
    })
    .await;
    assert!(exposed(&registry).iter().any(|n| n == "echo"));
    let answer = registry
        .call("echo", args(json!({"message": "over http"})), Some("k"))
        .await;
    assert_eq!(text(&answer), "Echo: over http");
    assert!(!format!("{:?}", registry.servers()).contains("hunter2"));
    registry.shutdown().await;
    let _ = tokio::time::timeout(PATIENCE, server.kill()).await;
}
