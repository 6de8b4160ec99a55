//! Every refusal and failure is an observation with a stable code, a remediation and a decision
//! id (DESIGN.md section 5).

use pretty_assertions::assert_eq;
use purko_protocol::{Code, Status};
use serde_json::json;

use crate::support::{Harness, assert_refused, call, run};

const SHOP: &str = "test/shop";
const AUTO: &str = "test/auto";

#[tokio::test]
async fn an_unknown_tool_is_not_found_with_a_suggestion_when_one_is_close() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(&engine, call(SHOP, "s1", "1", "create_ordr", json!({}))).await;
    assert_refused(&o, Status::Error, Code::ToolNotFound);
    let text = format!(
        "{} {}",
        o.message.as_deref().unwrap_or_default(),
        o.remediation.as_deref().unwrap_or_default()
    );
    assert!(text.contains("did you mean 'create_order'"), "{o:#?}");

    let o = run(&engine, call(SHOP, "s1", "2", "launch_rocket", json!({}))).await;
    assert_refused(&o, Status::Error, Code::ToolNotFound);
    assert!(
        !o.remediation
            .as_deref()
            .unwrap_or_default()
            .contains("did you mean"),
        "{o:#?}"
    );
    assert!(h.upstream.seen().is_empty());
}

#[tokio::test]
async fn a_declared_tool_without_a_backend_returns_no_result() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call(SHOP, "s1", "1", "search_code", json!({"query": "fn main"})),
    )
    .await;
    assert_refused(&o, Status::Error, Code::NoResult);
    assert_eq!(
        o.message.as_deref(),
        Some("Tool 'search_code' returned no result")
    );
}

#[tokio::test]
async fn arguments_that_do_not_fit_the_schema_fail_validation_with_the_errors() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call(SHOP, "s1", "1", "get_item", json!({"name": "apple"})),
    )
    .await;
    assert_refused(&o, Status::Error, Code::ValidationFailed);
    let errors = o
        .observation
        .as_ref()
        .and_then(|v| v["errors"].as_array())
        .expect("the errors");
    assert!(!errors.is_empty(), "{o:#?}");
    assert!(
        errors[0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("id")),
        "{o:#?}"
    );

    let o = run(
        &engine,
        call(
            SHOP,
            "s1",
            "2",
            "create_order",
            json!({"item": "apple", "quantity": 1000}),
        ),
    )
    .await;
    assert_refused(&o, Status::Error, Code::ValidationFailed);
    assert!(h.upstream.seen().is_empty());
}

#[tokio::test]
async fn a_restricted_agent_cannot_write() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call(
            "test/reader",
            "s1",
            "1",
            "create_order",
            json!({"item": "apple"}),
        ),
    )
    .await;
    assert_refused(&o, Status::Denied, Code::AutonomyBlocked);
    let o = run(
        &engine,
        call("test/reader", "s1", "2", "list_items", json!({})),
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(h.upstream.seen().len(), 1);
}

#[tokio::test]
async fn a_destination_in_a_read_or_write_call_is_refused() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call(
            SHOP,
            "s1",
            "1",
            "list_items",
            json!({"callback_url": "https://example.com/x"}),
        ),
    )
    .await;
    assert_refused(&o, Status::Denied, Code::DestinationRefused);
    let o = run(
        &engine,
        call(
            AUTO,
            "s1",
            "2",
            "create_order",
            json!({"item": "apple", "quantity": 1, "email": "a@example.com"}),
        ),
    )
    .await;
    assert_refused(&o, Status::Denied, Code::DestinationRefused);
    assert!(h.upstream.seen().is_empty());
}

#[tokio::test]
async fn a_destination_off_the_allow_list_is_refused() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call(
            "test/strict",
            "s1",
            "1",
            "fetch_url",
            json!({"url": "https://evil.example.net/"}),
        ),
    )
    .await;
    assert_refused(&o, Status::Denied, Code::DestinationRefused);
    assert!(h.upstream.seen().is_empty());

    // What the list admits passes, even a loopback address the egress guard refuses otherwise.
    let o = run(
        &engine,
        call(
            "test/strict",
            "s1",
            "2",
            "fetch_url",
            json!({"url": h.url("/items")}),
        ),
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    let fetched = h.upstream.seen_at("GET", "/fetch");
    assert_eq!(fetched.len(), 1);
    assert!(
        fetched[0]
            .query
            .as_deref()
            .is_some_and(|q| q.starts_with("url=http")),
        "the destination travels as a query argument: {:?}",
        fetched[0]
    );
}

#[tokio::test]
async fn a_deny_rule_denies_by_policy() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call(
            SHOP,
            "s1",
            "1",
            "create_order",
            json!({"item": "forbidden-fruit", "quantity": 1}),
        ),
    )
    .await;
    assert_refused(&o, Status::Denied, Code::DeniedByPolicy);
    assert!(
        o.message
            .as_deref()
            .is_some_and(|m| m.contains("forbidden items are never ordered")),
        "{o:#?}"
    );
    assert_eq!(o.approval_id, None, "a denied call asks nobody");
    assert!(h.upstream.seen().is_empty());
}

#[tokio::test]
async fn internal_and_metadata_urls_are_blocked_at_egress() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let loopback = h.url("/items");
    let targets = [
        "http://169.254.169.254/latest/meta-data/".to_owned(),
        format!("http://127.0.0.1:{}/", h.upstream.port),
        loopback,
    ];
    for (i, url) in targets.iter().enumerate() {
        for tool in ["fetch_url", "open_url"] {
            let o = run(
                &engine,
                call(
                    AUTO,
                    "s1",
                    &format!("{tool}-{i}"),
                    tool,
                    json!({"url": url}),
                ),
            )
            .await;
            assert_eq!(o.code, Some(Code::EgressBlocked), "{tool} {url}: {o:#?}");
            assert!(
                o.message.is_some() && o.remediation.is_some() && o.decision_id.is_some(),
                "{o:#?}"
            );
        }
    }
    assert!(h.upstream.seen().is_empty(), "{:?}", h.upstream.seen());

    // The key was given back: the same step is checked again, not replayed.
    let o = run(
        &engine,
        call(
            AUTO,
            "s1",
            "fetch_url-0",
            "fetch_url",
            json!({"url": targets[0]}),
        ),
    )
    .await;
    assert_eq!(o.code, Some(Code::EgressBlocked));
    assert!(!o.replayed, "{o:#?}");
}

#[tokio::test]
async fn an_operator_admitted_internal_url_passes_egress() {
    let h = Harness::with(
        r#"
apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: intranet
  namespace: test
spec:
  autonomyLevel: full
  tools:
    - name: open_url
      type: api
      description: Open a web page.
      inputSchema:
        type: object
        properties:
          url: {type: string}
        required: [url]
      endpoint:
        url: "{url}"
        method: GET
  guardrail:
    destinations:
      allow: ["http://127.0.0.1:{port}/*"]
"#,
    )
    .await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call(
            "test/intranet",
            "s1",
            "1",
            "open_url",
            json!({"url": h.url("/items")}),
        ),
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(h.upstream.seen_at("GET", "/items").len(), 1);
}

#[tokio::test]
async fn a_rate_limit_carries_the_cooldown_and_gives_the_key_back() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(&engine, call(AUTO, "s1", "1", "limited", json!({}))).await;
    assert_refused(&o, Status::Error, Code::RateLimitExceeded);
    assert_eq!(o.retry_after_seconds, Some(7));
    assert!(
        o.remediation.as_deref().is_some_and(|r| r.contains('7')),
        "{o:#?}"
    );

    let again = run(&engine, call(AUTO, "s1", "1", "limited", json!({}))).await;
    assert_eq!(again.code, Some(Code::RateLimitExceeded));
    assert!(
        !again.replayed,
        "the key was released, so the retry ran: {again:#?}"
    );
    assert_eq!(h.upstream.seen_at("GET", "/limited").len(), 2);
}

#[tokio::test]
async fn a_server_error_is_an_upstream_error() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(&engine, call(AUTO, "s1", "1", "boom", json!({}))).await;
    assert_refused(&o, Status::Error, Code::UpstreamError);
    assert!(
        o.message.as_deref().is_some_and(|m| m.contains("500")),
        "{o:#?}"
    );
}

#[tokio::test]
async fn a_slow_upstream_times_out() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(&engine, call(AUTO, "s1", "1", "sleepy", json!({}))).await;
    assert_refused(&o, Status::Error, Code::UpstreamTimeout);
}

#[tokio::test]
async fn a_closed_port_is_unavailable() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(&engine, call(AUTO, "s1", "1", "closed", json!({}))).await;
    assert_refused(&o, Status::Error, Code::UpstreamUnavailable);
}

#[tokio::test]
async fn every_refusal_is_recorded_with_its_outcome() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(&engine, call(SHOP, "s1", "1", "nope", json!({}))).await;
    let record = engine
        .store()
        .decision(o.decision_id.as_ref().expect("a decision id"))
        .await
        .expect("reads")
        .expect("recorded");
    let outcome = record.outcome.expect("with the outcome");
    assert_eq!(outcome.observation, o);
}
