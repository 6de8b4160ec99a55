//! What the reference servers cannot show, against a server built on the official SDK:
//! `_meta`, pagination, bad tools, `list_changed`, cancellation, `isError`.

use pretty_assertions::assert_eq;
use purko_protocol::Code;
use serde_json::json;

use crate::{args, assert_ready, exposed, scripted, spec, started, text};

#[tokio::test]
async fn pages_are_followed_and_bad_tools_dropped_with_warnings() {
    let registry = started(vec![spec("scripted", scripted())]).await;
    let status = assert_ready(&registry, "scripted");
    // Eight tools over three pages; three are outside the rules.
    assert_eq!(
        exposed(&registry),
        vec!["echo_meta", "add_tool", "hang", "cancellations", "fail"]
    );
    assert_eq!(status.warnings.len(), 3, "{:#?}", status.warnings);
    assert!(
        status.warnings[0].contains("'has space'"),
        "{:#?}",
        status.warnings
    );
    registry.shutdown().await;
}

#[tokio::test]
async fn the_idempotency_key_reaches_the_server_in_meta() {
    let registry = started(vec![spec("scripted", scripted())]).await;
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
}

#[tokio::test]
async fn the_cached_list_answers_without_asking_the_server() {
    let registry = started(vec![spec("scripted", scripted())]).await;
    let lists_before = list_calls(&registry).await;
    for _ in 0..50 {
        // `tools()` is not async: it cannot wait on the server.
        assert_eq!(registry.tools().len(), 5);
    }
    assert_eq!(list_calls(&registry).await, lists_before);
    registry.shutdown().await;
}

async fn list_calls(registry: &purko_mcp::Registry) -> u64 {
    let answer = registry.call("echo_meta", args(json!({})), None).await;
    answer.observation.expect("an answer")["structuredContent"]["listCalls"]
        .as_u64()
        .expect("a count")
}

#[tokio::test]
async fn list_changed_refreshes_the_cache() {
    let registry = started(vec![spec("scripted", scripted())]).await;
    let mut changes = registry.changes();
    changes.borrow_and_update();
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
}

#[tokio::test]
async fn a_name_missing_from_the_cache_refreshes_before_failing() {
    let registry = started(vec![spec("scripted", scripted())]).await;
    // Added and listed by the server; the call below may come before list_changed is handled.
    let added = registry
        .call("add_tool", args(json!({"name": "late"})), None)
        .await;
    assert!(added.is_success());
    let answer = registry.call("late", args(json!({})), None).await;
    // The server's own handler does not know `late`: it answers an error, not TOOL_NOT_FOUND.
    assert_eq!(answer.code, Some(Code::UpstreamError), "{answer:#?}");
    registry.shutdown().await;
}

#[tokio::test]
async fn an_is_error_result_becomes_upstream_error_with_its_text() {
    let registry = started(vec![spec("scripted", scripted())]).await;
    let answer = registry.call("fail", args(json!({})), None).await;
    assert_eq!(answer.code, Some(Code::UpstreamError), "{answer:#?}");
    assert!(answer.message.unwrap().contains("this tool always fails"));
    registry.shutdown().await;
}

#[tokio::test]
async fn a_timed_out_call_is_cancelled_upstream() {
    let mut s = spec("scripted", scripted());
    s.tool_timeout = std::time::Duration::from_millis(300);
    let registry = started(vec![s]).await;
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
}
