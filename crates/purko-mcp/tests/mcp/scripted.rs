//! What the reference servers cannot show, against a server built on the official SDK, over
//! stdio and over streamable HTTP (where Purko posts `tools/call` on rmcp's session itself):
//! `_meta`, pagination, bad tools, `list_changed`, cancellation, `isError`, a request from the
//! server in the middle of a call, a session the server forgets.

use std::future::Future;
use std::time::Duration;

use pretty_assertions::assert_eq;
use purko_mcp::ServerSpec;
use purko_protocol::Code;
use serde_json::json;

use crate::{args, assert_ready, exposed, scripted, scripted_http, spec, started, text};

/// Runs `test` against the scripted server over stdio, then over streamable HTTP.
async fn over_both<F, Fut>(test: F)
where
    F: Fn(ServerSpec) -> Fut,
    Fut: Future<Output = ()>,
{
    test(spec("scripted", scripted())).await;
    let (http, _server) = scripted_http().await;
    test(spec("scripted", http)).await;
}

#[tokio::test]
async fn pages_are_followed_and_bad_tools_dropped_with_warnings() {
    over_both(|spec| async {
        let registry = started(vec![spec]).await;
        let status = assert_ready(&registry, "scripted");
        // Thirteen tools over five pages; three are outside the rules.
        assert_eq!(exposed(&registry), TOOLS);
        assert_eq!(status.warnings.len(), 3, "{:#?}", status.warnings);
        assert!(
            status.warnings[0].contains("'has space'"),
            "{:#?}",
            status.warnings
        );
        registry.shutdown().await;
    })
    .await;
}

/// The scripted server's tools within MCP's rules, in its order.
const TOOLS: [&str; 10] = [
    "echo_meta",
    "add_tool",
    "hang",
    "cancellations",
    "fail",
    "ping_me",
    "forget_session",
    "garbage_answer",
    "drop_connection",
    "announce",
];

#[tokio::test]
async fn the_idempotency_key_reaches_the_server_in_meta() {
    over_both(|spec| async {
        let registry = started(vec![spec]).await;
        let answer = registry
            .call("echo_meta", args(json!({})), Some("key-123"))
            .await;
        assert!(answer.is_success(), "{answer:#?}");
        let meta = &answer.observation.unwrap()["structuredContent"]["meta"];
        assert_eq!(meta["purko.io/idempotency-key"], json!("key-123"), "{meta}");
        let without = registry.call("echo_meta", args(json!({})), None).await;
        let meta = &without.observation.unwrap()["structuredContent"]["meta"];
        assert!(meta.get("purko.io/idempotency-key").is_none(), "{meta}");
        registry.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn the_cached_list_answers_without_asking_the_server() {
    over_both(|spec| async {
        let registry = started(vec![spec]).await;
        let lists_before = echoed(&registry, "listCalls").await;
        for _ in 0..50 {
            // `tools()` is not async: it cannot wait on the server.
            assert_eq!(registry.tools().len(), TOOLS.len());
        }
        assert_eq!(echoed(&registry, "listCalls").await, lists_before);
        registry.shutdown().await;
    })
    .await;
}

/// A count `echo_meta` reports: `listCalls` (lists the server answered) or `echoCalls` (its
/// own calls, this one included).
async fn echoed(registry: &purko_mcp::Registry, count: &str) -> u64 {
    let answer = registry.call("echo_meta", args(json!({})), None).await;
    answer.observation.expect("an answer")["structuredContent"][count]
        .as_u64()
        .expect("a count")
}

#[tokio::test]
async fn list_changed_refreshes_the_cache() {
    over_both(|spec| async {
        let registry = started(vec![spec]).await;
        let mut changes = registry.changes();
        changes.borrow_and_update();
        // The server sends list_changed on the call's own stream, before the call's answer.
        let added = registry
            .call("add_tool", args(json!({"name": "brand_new"})), None)
            .await;
        assert_eq!(text(&added), "added brand_new");
        tokio::time::timeout(crate::PATIENCE, async {
            while !exposed(&registry).iter().any(|n| n == "brand_new") {
                changes.changed().await.unwrap();
            }
        })
        .await
        .expect("the new tool is listed after list_changed");
        registry.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_name_missing_from_the_cache_refreshes_before_failing() {
    over_both(|spec| async {
        let registry = started(vec![spec]).await;
        // Added and listed by the server; the call below may come before list_changed is
        // handled.
        let added = registry
            .call("add_tool", args(json!({"name": "late"})), None)
            .await;
        assert!(added.is_success());
        let answer = registry.call("late", args(json!({})), None).await;
        // The server's own handler does not know `late`: it answers an error, not
        // TOOL_NOT_FOUND.
        assert_eq!(answer.code, Some(Code::UpstreamError), "{answer:#?}");
        registry.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn an_is_error_result_becomes_upstream_error_with_its_text() {
    over_both(|spec| async {
        let registry = started(vec![spec]).await;
        let answer = registry.call("fail", args(json!({})), None).await;
        assert_eq!(answer.code, Some(Code::UpstreamError), "{answer:#?}");
        assert!(answer.message.unwrap().contains("this tool always fails"));
        registry.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_upstream() {
    over_both(|mut spec| async move {
        spec.tool_timeout = std::time::Duration::from_millis(300);
        let registry = started(vec![spec]).await;
        let answer = registry.call("hang", args(json!({})), None).await;
        assert_eq!(answer.code, Some(Code::UpstreamTimeout), "{answer:#?}");
        assert!(answer.remediation.is_some());
        // A caller that gives up is cancelled upstream too.
        let dropped = tokio::time::timeout(
            std::time::Duration::from_millis(100),
            registry.call("hang", args(json!({})), None),
        )
        .await;
        assert!(dropped.is_err());
        let cancelled = tokio::time::timeout(crate::PATIENCE, async {
            loop {
                let answer = registry.call("cancellations", args(json!({})), None).await;
                let list = answer.observation.unwrap()["structuredContent"]["cancelled"].clone();
                if list.as_array().unwrap().len() >= 2 {
                    return list;
                }
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            }
        })
        .await
        .expect("both calls were cancelled upstream");
        assert_eq!(cancelled.as_array().unwrap().len(), 2, "{cancelled}");
        registry.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_request_from_the_server_during_a_call_is_answered() {
    over_both(|spec| async {
        let registry = started(vec![spec]).await;
        let answer = registry.call("ping_me", args(json!({})), None).await;
        assert_eq!(text(&answer), "pinged", "{answer:#?}");
        registry.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_session_the_server_forgot_is_opened_again_and_the_call_runs_once() {
    let (http, _server) = scripted_http().await;
    let registry = started(vec![spec("scripted", http)]).await;
    let before = echoed(&registry, "echoCalls").await;
    let forgotten = registry.call("forget_session", args(json!({})), None).await;
    assert_eq!(text(&forgotten), "forgotten", "{forgotten:#?}");
    // The server answers 404 to the old session; the call goes through a new one.
    let after = echoed(&registry, "echoCalls").await;
    assert_eq!(after, before + 1, "the call ran exactly once");
    let again = echoed(&registry, "echoCalls").await;
    assert_eq!(again, after + 1);
    registry.shutdown().await;
}

#[tokio::test]
async fn a_kept_connection_the_server_closed_is_replaced_and_the_call_runs_once() {
    let (http, _server) = scripted_http().await;
    let registry = started(vec![spec("scripted", http)]).await;
    let before = echoed(&registry, "echoCalls").await;
    // The scripted server closes connections idle for about a second.
    tokio::time::sleep(Duration::from_millis(1_800)).await;
    let answer = registry.call("echo_meta", args(json!({})), None).await;
    assert!(answer.is_success(), "{answer:#?}");
    let after = answer.observation.expect("an answer")["structuredContent"]["echoCalls"]
        .as_u64()
        .expect("a count");
    assert_eq!(after, before + 1, "the call ran exactly once");
    registry.shutdown().await;
}

#[tokio::test]
async fn calls_at_once_over_http_each_run_once() {
    let (http, _server) = scripted_http().await;
    let registry = started(vec![spec("scripted", http)]).await;
    let before = echoed(&registry, "echoCalls").await;
    let calls = (0..24).map(|_| registry.call("echo_meta", args(json!({})), None));
    let answers = futures::future::join_all(calls).await;
    for answer in &answers {
        assert!(answer.is_success(), "{answer:#?}");
    }
    // Again, on the connections the first round left.
    let answers = futures::future::join_all(
        (0..24).map(|_| registry.call("echo_meta", args(json!({})), None)),
    )
    .await;
    assert!(answers.iter().all(purko_protocol::Observation::is_success));
    let after = echoed(&registry, "echoCalls").await;
    assert_eq!(after, before + 49, "every call ran exactly once");
    registry.shutdown().await;
}

#[tokio::test]
async fn a_broken_answer_over_http_is_a_clear_error_and_the_session_goes_on() {
    let (http, _server) = scripted_http().await;
    let registry = started(vec![spec("scripted", http)]).await;
    let garbage = registry.call("garbage_answer", args(json!({})), None).await;
    assert_eq!(garbage.code, Some(Code::UpstreamError), "{garbage:#?}");
    let message = garbage.message.clone().unwrap_or_default();
    assert!(
        message.contains("garbage_answer") && message.contains("not JSON-RPC"),
        "{message}"
    );
    assert!(garbage.remediation.is_some());
    let dropped = registry
        .call("drop_connection", args(json!({})), None)
        .await;
    assert_eq!(
        dropped.code,
        Some(Code::UpstreamUnavailable),
        "{dropped:#?}"
    );
    assert!(
        dropped
            .message
            .unwrap_or_default()
            .contains("may or may not have taken effect"),
    );
    // The session and the server are unharmed.
    let answer = registry.call("echo_meta", args(json!({})), None).await;
    assert!(answer.is_success(), "{answer:#?}");
    registry.shutdown().await;
}
