//! Servers that do not start, do not answer, answer garbage or die: each is reported, retried,
//! and never disturbs the others.

use std::time::Duration;

use pretty_assertions::assert_eq;
use purko_mcp::{Registry, ServerState, Transport};
use purko_protocol::Code;
use serde_json::json;

use crate::{args, assert_ready, everything, exposed, spec, started, status, text, wait_for};

fn node_eval(code: &str) -> Transport {
    Transport::Stdio {
        command: "node".into(),
        args: vec!["-e".into(), code.into()],
        env: vec![("SECRET_TOKEN".into(), "tok-very-secret".into())],
        cwd: None,
    }
}

#[tokio::test]
async fn an_http_server_nobody_listens_at_is_reported_in_plain_words() {
    let url = format!("http://127.0.0.1:{}/mcp", crate::free_port());
    let http = Transport::Http {
        url: url.clone(),
        headers: vec![],
    };
    let registry = Registry::start(vec![spec("away", http)]);
    wait_for(&registry, "the failed connection to be reported", |s| {
        s[0].last_error.is_some()
    })
    .await;
    let error = status(&registry, "away").last_error.unwrap();
    assert!(
        error.contains(&url) && error.contains("cannot connect: Connection refused"),
        "{error}"
    );
    assert!(error.contains("check that the server runs"), "{error}");
    assert!(
        !error.contains("rmcp::"),
        "rmcp's type names stay out: {error}"
    );
    registry.shutdown().await;
}

#[tokio::test]
async fn an_http_server_answering_an_error_page_is_reported_without_the_page() {
    let port = crate::free_port();
    let _server = tokio::process::Command::new("node")
        .arg(crate::peer("server-everything").join("dist/index.js"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    // The server serves /mcp; this URL's path is wrong.
    let http = Transport::Http {
        url: format!("http://127.0.0.1:{port}/wrong"),
        headers: vec![],
    };
    let registry = Registry::start(vec![spec("wrong", http)]);
    wait_for(&registry, "the answer to be reported", |s| {
        s[0].last_error
            .as_deref()
            .is_some_and(|e| !e.contains("Connection refused"))
    })
    .await;
    let error = status(&registry, "wrong").last_error.unwrap();
    assert!(error.contains("HTTP 404 Not Found"), "{error}");
    assert!(!error.contains('<') && !error.contains('\n'), "{error}");
    registry.shutdown().await;
}

#[tokio::test]
async fn a_python_sdk_server_keeps_its_connection_though_it_ends_each_answer_apart() {
    let python = crate::workspace().join("target/py-mcp/bin/python");
    assert!(
        python.exists(),
        "the Python MCP SDK is missing: run .ci/run, or: python3 -m venv target/py-mcp && target/py-mcp/bin/pip install mcp==2.3.0"
    );
    let port = crate::free_port();
    let _server = tokio::process::Command::new(python)
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/mcp/fixtures/python_server.py"),
        )
        .arg(port.to_string())
        .kill_on_drop(true)
        .spawn()
        .expect("python runs");
    crate::listening(port).await;
    let http = Transport::Http {
        url: format!("http://127.0.0.1:{port}/mcp"),
        headers: vec![],
    };
    let registry = crate::started(vec![spec("python", http)]).await;
    for _ in 0..20 {
        let answer = registry
            .call("echo", args(json!({"message": "hi"})), None)
            .await;
        assert_eq!(text(&answer), "Echo: hi");
    }
    // rmcp's own connections (its requests, the server's stream) and Purko's one for calls; a
    // connection per call would be twenty more.
    let seen = registry.call("connections", args(json!({})), None).await;
    let seen: u64 = text(&seen).parse().expect("a count");
    assert!(seen < 10, "{seen} connections for 21 calls");
    registry.shutdown().await;
}

#[tokio::test]
async fn a_missing_command_fails_clearly_and_others_run() {
    let missing = Transport::Stdio {
        command: "purko-no-such-command".into(),
        args: vec![],
        env: vec![],
        cwd: None,
    };
    let registry = started(vec![
        spec("ghost", missing),
        spec("everything", everything()),
    ])
    .await;
    let ghost = status(&registry, "ghost");
    assert_eq!(ghost.state, ServerState::Failed, "{ghost:#?}");
    let error = ghost.last_error.unwrap();
    assert!(
        error.contains("'purko-no-such-command' could not be started"),
        "{error}"
    );
    assert_ready(&registry, "everything");
    assert_eq!(
        text(
            &registry
                .call("echo", args(json!({"message": "fine"})), None)
                .await
        ),
        "Echo: fine"
    );
    registry.shutdown().await;
}

#[tokio::test]
async fn a_server_that_never_answers_initialize_fails_after_the_startup_timeout() {
    let mut silent = spec("silent", node_eval("setInterval(() => {}, 1000)"));
    silent.startup_timeout = Duration::from_millis(500);
    let registry = started(vec![silent]).await;
    let s = status(&registry, "silent");
    assert_eq!(s.state, ServerState::Failed, "{s:#?}");
    let error = s.last_error.unwrap();
    assert!(error.contains("did not answer initialize"), "{error}");
    assert!(exposed(&registry).is_empty());
    registry.shutdown().await;
}

#[tokio::test]
async fn a_server_that_prints_garbage_fails_without_harm() {
    let mut garbage = spec(
        "garbage",
        node_eval(
            "console.log('not json'); console.error('tok-very-secret leaked'); setInterval(() => {}, 1000)",
        ),
    );
    garbage.startup_timeout = Duration::from_secs(2);
    let registry = started(vec![garbage, spec("everything", everything())]).await;
    let s = status(&registry, "garbage");
    assert_eq!(s.state, ServerState::Failed, "{s:#?}");
    let error = s.last_error.clone().unwrap_or_default();
    assert!(error.contains("did not answer initialize"), "{error}");
    assert!(error.contains("[redacted] leaked"), "{error}");
    assert!(!format!("{s:?}").contains("tok-very-secret"), "{s:#?}");
    assert_ready(&registry, "everything");
    registry.shutdown().await;
}

#[tokio::test]
async fn a_server_that_exits_at_once_is_retried_with_backoff() {
    let registry = Registry::start(vec![spec("quitter", node_eval("process.exit(3)"))]);
    wait_for(&registry, "two restarts", |s| s[0].restarts >= 2).await;
    let s = status(&registry, "quitter");
    assert_ne!(s.state, ServerState::Ready);
    assert!(s.last_error.is_some(), "{s:#?}");
    registry.shutdown().await;
}

#[tokio::test]
async fn a_killed_server_is_restarted_and_calls_meanwhile_are_unavailable() {
    let registry = started(vec![spec("everything", everything())]).await;
    let first = assert_ready(&registry, "everything");
    let pid = first.pid.expect("a stdio server has a pid");
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_for(&registry, "the server to be noticed down", |s| {
        s[0].state != ServerState::Ready
    })
    .await;
    let during = registry
        .call("echo", args(json!({"message": "x"})), None)
        .await;
    // Unless the restart already finished (then the call simply works).
    if !during.is_success() {
        assert_eq!(during.code, Some(Code::UpstreamUnavailable), "{during:#?}");
        assert!(
            during.message.as_ref().unwrap().contains("try again in"),
            "{during:#?}"
        );
        assert!(during.retry_after_seconds.is_some());
    }
    wait_for(&registry, "the server to come back", |s| {
        s[0].state == ServerState::Ready
    })
    .await;
    let again = status(&registry, "everything");
    assert_ne!(again.pid, Some(pid));
    assert_eq!(again.restarts, 1);
    assert!(exposed(&registry).iter().any(|n| n == "echo"));
    assert_eq!(
        text(
            &registry
                .call("echo", args(json!({"message": "back"})), None)
                .await
        ),
        "Echo: back"
    );
    registry.shutdown().await;
}

#[tokio::test]
async fn a_server_dying_mid_call_answers_unavailable_not_a_hang() {
    let registry = started(vec![spec("everything", everything())]).await;
    let pid = assert_ready(&registry, "everything").pid.unwrap();
    let call = registry.call(
        "trigger-long-running-operation",
        args(json!({"duration": 20, "steps": 2})),
        None,
    );
    let kill = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        std::process::Command::new("kill")
            .args(["-9", &pid.to_string()])
            .status()
            .unwrap();
    };
    let (answer, ()) = tokio::join!(call, kill);
    assert_eq!(answer.code, Some(Code::UpstreamUnavailable), "{answer:#?}");
    wait_for(&registry, "the server to come back", |s| {
        s[0].state == ServerState::Ready
    })
    .await;
    registry.shutdown().await;
}
