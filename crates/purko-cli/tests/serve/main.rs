//! `purko serve` run for real on loopback, with a real `SQLite` file and a real upstream: the
//! approval flow through the CLI, tokens, restarts, a crash in flight, and bad input.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a broken fixture should fail the test loudly"
)]

mod gateway;
mod mcp;
mod support;

use std::os::unix::fs::PermissionsExt;
use std::process::Command;
use std::time::{Duration, Instant};

use support::{AGENT, OPERATOR, Scratch, Server, Upstream, stderr, stdout};

#[test]
fn a_read_runs_a_write_waits_and_an_approval_from_the_cli_runs_it_once() {
    let upstream = Upstream::start();
    let scratch = Scratch::new("flow");
    let server = Server::start(&scratch.manifest(&upstream, "supervised"), &scratch.home());

    let read = server.call("1", "list_items", "{}", true);
    assert_eq!(read["status"], "success", "{read}");
    assert_eq!(read["observation"]["body"]["items"][0], "apple");

    let args = r#"{"item": "apple", "quantity": 2}"#;
    let pending = server.call("2", "create_order", args, false);
    assert_eq!(pending["status"], "pending", "{pending}");
    let approval = pending["approval_id"].as_str().unwrap().to_owned();
    assert_eq!(upstream.count("POST", "/orders"), 0);

    let again = server.call("2", "create_order", args, false);
    assert_eq!(
        again["approval_id"],
        approval.as_str(),
        "the same call finds the same approval"
    );

    let list = server.purko(&["approvals", "list"]);
    assert!(stdout(&list).contains(&approval), "{}", stdout(&list));
    let show = server.purko(&["approvals", "show", &approval]);
    let shown = stdout(&show);
    assert!(
        shown.contains("create_order") && shown.contains("\"quantity\": 2"),
        "{shown}"
    );
    assert!(shown.contains("source:"), "how sure the kind is: {shown}");

    let approve = server.purko(&["approvals", "approve", &approval, "--comment", "fine"]);
    assert!(approve.status.success(), "{}", stderr(&approve));
    assert!(
        stdout(&approve).contains("approved"),
        "{}",
        stdout(&approve)
    );

    let twice = server.purko(&["approvals", "reject", &approval]);
    assert_eq!(twice.status.code(), Some(1));
    assert!(
        stderr(&twice).contains("already approved"),
        "{}",
        stderr(&twice)
    );

    let done = server.call("2", "create_order", args, false);
    assert_eq!(done["status"], "success", "{done}");
    let replay = server.call("2", "create_order", args, false);
    assert_eq!(replay["replayed"], true, "{replay}");
    assert_eq!(
        upstream.count("POST", "/orders"),
        1,
        "executed exactly once"
    );
    let seen = &upstream.requests("/orders")[0];
    assert_eq!(seen.body, r#"{"item":"apple","quantity":2}"#);
    assert_eq!(seen.headers["idempotency-key"].len(), 64);

    let decision = pending["decision_id"].as_str().unwrap();
    let explain = server.purko(&["explain", decision]);
    assert!(explain.status.success(), "{}", stderr(&explain));
    assert!(
        stdout(&explain).contains("create_order"),
        "{}",
        stdout(&explain)
    );
}

#[test]
fn the_agent_token_can_call_tools_but_never_approve() {
    let upstream = Upstream::start();
    let scratch = Scratch::new("tokens");
    let server = Server::start(&scratch.manifest(&upstream, "supervised"), &scratch.home());
    let body = r#"{"agent": "test/shopper", "session": "s", "step": 1, "name": "create_order", "arguments": {"item": "pear", "quantity": 1}, "wait": false}"#;
    let (status, pending) = server.api("POST", "/api/tools/call", Some(AGENT), Some(body));
    assert_eq!(status, 200, "{pending}");
    let id = pending["approval_id"].as_str().unwrap();

    for (method, path) in [
        ("POST", format!("/api/approvals/{id}/approve")),
        ("POST", format!("/api/approvals/{id}/reject")),
        ("GET", format!("/api/approvals/{id}")),
        ("GET", "/api/approvals?status=pending".to_owned()),
    ] {
        let (status, answer) = server.api(method, &path, Some(AGENT), Some("{}"));
        assert_eq!(status, 403, "{method} {path}: {answer}");
        assert!(answer["error"].as_str().unwrap().contains("operator token"));
    }
    let (status, _) = server.api("POST", &format!("/api/approvals/{id}/approve"), None, None);
    assert_eq!(status, 401);
    let (status, _) = server.api(
        "POST",
        &format!("/api/approvals/{id}/approve"),
        Some("guess"),
        None,
    );
    assert_eq!(status, 401);
    let (status, approval) =
        server.api("GET", &format!("/api/approvals/{id}"), Some(OPERATOR), None);
    assert_eq!(status, 200);
    assert_eq!(
        approval["approval"]["status"], "pending",
        "nothing the agent did answered it"
    );
    assert_eq!(upstream.count("POST", "/orders"), 0);
}

#[test]
fn an_approval_survives_a_restart() {
    let upstream = Upstream::start();
    let scratch = Scratch::new("restart");
    let manifest = scratch.manifest(&upstream, "supervised");
    let mut server = Server::start(&manifest, &scratch.home());
    let args = r#"{"item": "plum", "quantity": 3}"#;
    let pending = server.call("7", "create_order", args, false);
    let approval = pending["approval_id"].as_str().unwrap().to_owned();
    server.kill();

    let server = Server::start(&manifest, &scratch.home());
    let list = server.purko(&["approvals", "list"]);
    assert!(stdout(&list).contains(&approval), "{}", stdout(&list));
    assert!(
        server
            .purko(&["approvals", "approve", &approval])
            .status
            .success()
    );
    let done = server.call("7", "create_order", args, false);
    assert_eq!(done["status"], "success", "{done}");
    assert_eq!(upstream.count("POST", "/orders"), 1);
    let explain = server.purko(&["explain", pending["decision_id"].as_str().unwrap()]);
    assert!(
        explain.status.success(),
        "explain works after a restart: {}",
        stderr(&explain)
    );
}

#[test]
fn a_call_lost_in_a_crash_is_reported_outcome_unknown() {
    let upstream = Upstream::start();
    let scratch = Scratch::new("crash");
    let manifest = scratch.manifest(&upstream, "full");
    let mut server = Server::start(&manifest, &scratch.home());
    let url = server.url();
    let home = scratch.home();
    let in_flight = std::thread::spawn(move || {
        Command::new(env!("CARGO_BIN_EXE_purko"))
            .args([
                "call",
                "--server",
                &url,
                "--agent",
                "test/shopper",
                "--session",
                "s1",
                "--step",
                "9",
                "create_slow_order",
            ])
            .env("PURKO_HOME", home)
            .env("PURKO_AGENT_TOKEN", AGENT)
            .output()
            .unwrap()
    });
    let deadline = Instant::now() + Duration::from_secs(30);
    while upstream.count("POST", "/slow") == 0 {
        assert!(
            Instant::now() < deadline,
            "the call never reached the upstream"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    server.kill();
    let _ = in_flight.join();

    let server = Server::start(&manifest, &scratch.home());
    let answer = server.call("9", "create_slow_order", "{}", true);
    assert_eq!(answer["code"], "OUTCOME_UNKNOWN", "{answer}");
    assert_eq!(
        upstream.count("POST", "/slow"),
        1,
        "never executed a second time"
    );
}

#[test]
fn bad_requests_get_clear_errors_and_the_server_stays_up() {
    let upstream = Upstream::start();
    let scratch = Scratch::new("bad");
    let server = Server::start(&scratch.manifest(&upstream, "supervised"), &scratch.home());
    let cases = [
        ("POST", "/api/tools/call", "{not json", 400, "is not JSON"),
        (
            "POST",
            "/api/tools/call",
            r#"{"agent": "test/shopper", "name": "list_items"}"#,
            400,
            "missing field",
        ),
        (
            "POST",
            "/api/tools/call",
            r#"{"agent": "nobody/here", "session": "s", "step": 1, "name": "x"}"#,
            404,
            "no agent named 'nobody/here'",
        ),
        (
            "GET",
            "/api/decisions/d_nope",
            "",
            400,
            "is not a decision id",
        ),
        (
            "GET",
            "/api/decisions/d_000000000000_i_deadbeef_01JH8X3K9Q7B2R5V0N4M6T1YZC",
            "",
            404,
            "no decision",
        ),
        (
            "POST",
            "/api/approvals/a_01JH8X3K9Q7B2R5V0N4M6T1YZC/approve",
            "",
            404,
            "no approval",
        ),
        ("GET", "/api/tools", "", 400, "which agent"),
        ("GET", "/nowhere", "", 404, "no such endpoint"),
    ];
    for (method, path, body, status, says) in cases {
        let body = (!body.is_empty()).then_some(body);
        let (got, answer) = server.api(method, path, Some(OPERATOR), body);
        assert_eq!(got, status, "{method} {path}: {answer}");
        let error = answer["error"].as_str().unwrap_or_default();
        assert!(error.contains(says), "{method} {path}: {answer}");
        assert!(answer["hint"].is_string(), "{answer}");
    }
    let unknown = server.call("1", "list_itemz", "{}", true);
    assert_eq!(unknown["code"], "TOOL_NOT_FOUND", "{unknown}");
    let (status, _) = server.api("GET", "/healthz", None, None);
    assert_eq!(status, 200, "still up");
}

#[test]
fn a_corrupt_store_or_a_broken_manifest_stops_serve_with_a_clear_message() {
    let upstream = Upstream::start();
    let scratch = Scratch::new("corrupt");
    let manifest = scratch.manifest(&upstream, "supervised");
    std::fs::create_dir_all(scratch.home()).unwrap();
    let db = scratch.home().join("purko.db");
    std::fs::write(&db, b"this is not a database, and it is mine").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_purko"))
        .args([
            "serve",
            manifest.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
        .env("PURKO_HOME", scratch.home())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("purko.db"), "{}", stderr(&out));
    assert!(stderr(&out).contains("hint:"), "{}", stderr(&out));
    assert_eq!(
        std::fs::read(&db).unwrap(),
        b"this is not a database, and it is mine"
    );

    let broken = scratch.dir.join("broken.yaml");
    std::fs::write(&broken, "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: a}\nspec:\n  autonomyLevel: sometimes\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_purko"))
        .args(["serve", broken.to_str().unwrap(), "--listen", "127.0.0.1:0"])
        .env("PURKO_HOME", scratch.dir.join("other"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("broken.yaml:5:"), "{}", stderr(&out));
}

#[test]
fn serve_without_manifests_answers_health_and_says_it_has_no_agents() {
    let scratch = Scratch::new("empty");
    let port = support::free_port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_purko"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}")])
        .env("PURKO_HOME", scratch.home())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("purko serve exited with {status}");
        }
        assert!(Instant::now() < deadline, "purko serve did not start");
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let log = stderr(&out);
    assert!(log.contains("no manifests given"), "{log}");
    assert!(
        log.contains("operator.token (mode 0600)"),
        "tokens are made and shown once: {log}"
    );
    let token = std::fs::read_to_string(scratch.home().join("operator.token")).unwrap();
    let mode = std::fs::metadata(scratch.home().join("operator.token"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    assert!(log.contains(token.trim()));
}

#[test]
fn a_malformed_decision_id_is_refused_before_any_server_is_asked() {
    let out = Command::new(env!("CARGO_BIN_EXE_purko"))
        .args(["explain", "d_nope", "--server", "http://127.0.0.1:9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("is not a decision id"),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("hint:"), "{}", stderr(&out));
}

#[test]
fn the_quickstart_agent_loads_with_two_reads_and_one_write() {
    let scratch = Scratch::new("quickstart");
    let manifest = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/quickstart/agent.yaml");
    let server = Server::start(&manifest, &scratch.home());
    let (status, tools) = server.api(
        "GET",
        "/api/tools?agent=quickstart/shopper",
        Some(AGENT),
        None,
    );
    assert_eq!(status, 200, "{tools}");
    let kinds: Vec<(String, String)> = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["name"].as_str().unwrap().to_owned(),
                t["kind"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let expected = [
        ("list_items", "read"),
        ("get_item", "read"),
        ("create_order", "write"),
    ];
    assert_eq!(
        kinds,
        expected.map(|(n, k)| (n.to_owned(), k.to_owned())).to_vec()
    );
}
