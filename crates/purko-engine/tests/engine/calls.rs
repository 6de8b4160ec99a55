//! Calls that simply run: reads, the audit record and its explanation, what the model is shown.

use pretty_assertions::assert_eq;
use purko_protocol::{Effect, Kind, Status};
use serde_json::json;

use crate::support::{Harness, call, run};

#[tokio::test]
async fn an_allowed_read_runs_once_and_is_recorded_and_explainable_from_another_process() {
    let h = Harness::start().await;
    let o = {
        let engine = h.engine().await;
        let o = run(
            &engine,
            call("test/shop", "s1", "1", "get_item", json!({"id": "apple"})),
        )
        .await;
        assert_eq!(o.status, Status::Success, "{o:#?}");
        assert_eq!(
            o.observation,
            Some(json!({"status": 200, "body": {"id": "apple", "price": 3}}))
        );
        let gets = h.upstream.seen_at("GET", "/items/apple");
        assert_eq!(gets.len(), 1);
        assert_eq!(
            gets[0].header("idempotency-key"),
            None,
            "a read needs no key"
        );
        o
    };
    let id = o.decision_id.clone().expect("a decision id");

    // Another "process": a new store and engine on the same file.
    let engine = h.engine().await;
    let record = engine
        .store()
        .decision(&id)
        .await
        .expect("reads")
        .expect("recorded");
    assert_eq!(record.evaluation.effect, Effect::Allow);
    assert_eq!(record.evaluation.kind, Some(Kind::Read));
    assert_eq!((record.session.as_str(), record.step.as_str()), ("s1", "1"));
    assert_eq!(record.outcome.as_ref().map(|x| &x.observation), Some(&o));

    let (explained, text) = engine
        .explain(&id)
        .await
        .expect("explains")
        .expect("knows the id");
    assert_eq!(explained, record);
    assert!(text.contains("get_item"), "{text}");
    assert!(
        text.contains("outcome") && text.contains("success"),
        "{text}"
    );
    assert!(!text.contains("note"), "nothing changed since: {text}");
    assert_eq!(h.upstream.seen().len(), 1);
}

#[tokio::test]
#[expect(
    unsafe_code,
    reason = "set_var is unsafe in edition 2024; the name is unique to this test"
)]
async fn a_credential_reaches_the_upstream_but_never_the_model() {
    const VAR: &str = "PURKO_ENGINE_TEST_ECHO_TOKEN_7F3A";
    const SECRET: &str = "s3cr3t-echo-token-9b1e4d";
    // SAFETY: no other test reads or writes this variable.
    unsafe { std::env::set_var(VAR, SECRET) };
    let h = Harness::with(&format!(
        r"
apiVersion: purko.io/v1alpha1
kind: Agent
metadata:
  name: echo
  namespace: test
spec:
  autonomyLevel: full
  tools:
    - name: echo
      type: api
      endpoint:
        url: http://127.0.0.1:{{port}}/echo
        method: POST
        authScheme: Bearer
        secretRef: {{env: {VAR}}}
"
    ))
    .await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call("test/echo", "s1", "1", "echo", json!({"say": "hello"})),
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");

    let seen = h.upstream.seen_at("POST", "/echo");
    assert_eq!(seen.len(), 1);
    assert_eq!(
        seen[0].header("authorization"),
        Some(format!("Bearer {SECRET}").as_str())
    );
    let shown = serde_json::to_string(&o).expect("serializes");
    assert!(!shown.contains(SECRET), "{shown}");
    assert!(shown.contains("[redacted]"), "{shown}");

    // Neither in the audit log, nor its explanation.
    let id = o.decision_id.clone().expect("a decision id");
    let (record, text) = engine
        .explain(&id)
        .await
        .expect("explains")
        .expect("knows the id");
    let outcome = serde_json::to_string(&record.outcome.expect("an outcome").observation)
        .expect("serializes");
    assert!(!outcome.contains(SECRET), "{outcome}");
    assert!(!text.contains(SECRET), "{text}");
    // The replay is the stored, redacted observation.
    let replay = run(
        &engine,
        call("test/echo", "s1", "1", "echo", json!({"say": "hello"})),
    )
    .await;
    assert!(replay.replayed, "{replay:#?}");
    assert!(
        !serde_json::to_string(&replay)
            .expect("serializes")
            .contains(SECRET)
    );
}

#[tokio::test]
async fn a_large_answer_is_cut_and_marked() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(&engine, call("test/auto", "s1", "1", "list_big", json!({}))).await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert!(o.truncated, "truncated is not set");
    let size = serde_json::to_string(o.observation.as_ref().expect("a payload"))
        .expect("serializes")
        .len();
    assert!(
        size <= purko_engine::MAX_OUTPUT_BYTES + 1_000,
        "{size} bytes came back"
    );
}

#[tokio::test]
async fn the_tool_list_leaves_out_what_an_agent_could_never_call() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let names = |agent: &str| -> Vec<String> {
        let mut names: Vec<String> = engine
            .tools(agent)
            .expect("a known agent")
            .iter()
            .map(|t| t["name"].as_str().unwrap_or_default().to_owned())
            .collect();
        names.sort();
        names
    };
    assert_eq!(names("test/reader"), vec!["list_items"]);
    assert!(names("test/shop").contains(&"create_order".to_owned()));
}
