//! "Never runs a mutation twice": concurrent repeats, other arguments under the same key, and
//! the key the upstream sees.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use purko_protocol::{Code, Status};
use purko_store::Store as _;
use serde_json::json;

use crate::support::{Harness, call, run, within};

const AUTO: &str = "test/auto";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn twenty_concurrent_identical_calls_execute_once() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let barrier = Arc::new(tokio::sync::Barrier::new(20));
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let engine = Arc::clone(&engine);
            let barrier = Arc::clone(&barrier);
            tokio::spawn(async move {
                barrier.wait().await;
                engine
                    .call(call(AUTO, "s1", "1", "slow_order", json!({})))
                    .await
            })
        })
        .collect();
    let mut answers = Vec::new();
    for task in tasks {
        answers.push(
            within(task)
                .await
                .expect("joins")
                .expect("the engine answers"),
        );
    }

    assert_eq!(h.upstream.seen_at("POST", "/slow").len(), 1);
    let executed: Vec<_> = answers
        .iter()
        .filter(|o| o.status == Status::Success && !o.replayed)
        .collect();
    assert_eq!(executed.len(), 1, "{answers:#?}");
    for o in &answers {
        let fine = (o.status == Status::Success)
            || (o.status == Status::Error && o.code == Some(Code::DuplicateInProgress));
        assert!(fine, "{o:#?}");
        if o.code == Some(Code::DuplicateInProgress) {
            assert!(o.remediation.is_some() && o.decision_id.is_some(), "{o:#?}");
        }
    }
    // Once it is done, a repeat replays.
    let o = run(&engine, call(AUTO, "s1", "1", "slow_order", json!({}))).await;
    assert!(o.replayed && o.is_success(), "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/slow").len(), 1);
}

#[tokio::test]
async fn the_same_step_with_other_arguments_is_a_mismatch() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let o = run(
        &engine,
        call(
            AUTO,
            "s1",
            "1",
            "create_order",
            json!({"item": "apple", "quantity": 1}),
        ),
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");

    let o = run(
        &engine,
        call(
            AUTO,
            "s1",
            "1",
            "create_order",
            json!({"item": "apple", "quantity": 9}),
        ),
    )
    .await;
    assert_eq!(
        (o.status, o.code),
        (Status::Error, Some(Code::IdempotencyMismatch)),
        "{o:#?}"
    );
    assert!(o.remediation.is_some() && o.decision_id.is_some(), "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 1);

    // Another step is another call.
    let o = run(
        &engine,
        call(
            AUTO,
            "s1",
            "2",
            "create_order",
            json!({"item": "apple", "quantity": 9}),
        ),
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 2);
}

#[tokio::test]
async fn the_callers_own_key_is_the_one_sent_upstream() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let mut request = call(
        AUTO,
        "s1",
        "1",
        "create_order",
        json!({"item": "apple", "quantity": 1}),
    );
    request.idempotency_key = Some("caller-key-0001".into());
    let o = run(&engine, request.clone()).await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    let posts = h.upstream.seen_at("POST", "/orders");
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].header("idempotency-key"), Some("caller-key-0001"));

    // The caller's key, not session and step, decides what is a repeat.
    request.step = "2".into();
    let o = run(&engine, request).await;
    assert!(o.replayed, "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 1);
}

#[tokio::test]
async fn derived_keys_differ_by_step_and_stay_the_same_across_restarts() {
    let h = Harness::start().await;
    let order = |step: &str| {
        call(
            AUTO,
            "s1",
            step,
            "create_order",
            json!({"item": "apple", "quantity": 1}),
        )
    };
    {
        let engine = h.engine().await;
        run(&engine, order("1")).await;
        run(&engine, order("2")).await;
    }
    let engine = h.engine().await;
    let o = run(&engine, order("1")).await;
    assert!(o.replayed, "the new process derives the same key: {o:#?}");
    let keys: Vec<String> = h
        .upstream
        .seen_at("POST", "/orders")
        .iter()
        .map(|s| s.header("idempotency-key").unwrap_or_default().to_owned())
        .collect();
    assert_eq!(keys.len(), 2);
    assert_ne!(keys[0], keys[1]);
}

#[tokio::test]
async fn a_call_cut_off_by_a_crash_is_outcome_unknown_until_an_operator_clears_it() {
    let h = Harness::start().await;
    let arguments = json!({"item": "apple", "quantity": 1});
    // A process that claimed the call and died before it finished: same host, a pid that
    // cannot be running.
    let store = purko_store::SqliteStore::open(&h.state()).expect("opens the store");
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default();
    let dead = purko_store::ProcessIdentity {
        pid: u32::MAX - 1,
        host,
        start_ticks: None,
    };
    let now = purko_engine::now_ms();
    let run_id = store
        .start_run_as(&dead, now)
        .await
        .expect("registers the run");
    let secret = store.idempotency_secret().await.expect("the secret");
    let key = purko_engine::idempotency_key(&secret, "s1", "1", "create_order");
    let claim = store
        .claim(&purko_store::ClaimRequest {
            key: key.clone(),
            agent: AUTO.into(),
            tool: "create_order".into(),
            arguments_digest: purko_engine::arguments_digest(&arguments),
            decision_id: purko_protocol::DecisionId::new(
                None,
                true,
                "00000000",
                &ulid::Ulid::generate().to_string(),
            ),
            run: run_id,
            now_ms: now,
            ttl_ms: 86_400_000,
        })
        .await
        .expect("claims");
    assert_eq!(claim, purko_store::Claim::Claimed);

    let engine = h.engine().await;
    let o = run(
        &engine,
        call(AUTO, "s1", "1", "create_order", arguments.clone()),
    )
    .await;
    assert_eq!(
        (o.status, o.code),
        (Status::Error, Some(Code::OutcomeUnknown)),
        "{o:#?}"
    );
    assert!(o.remediation.is_some() && o.decision_id.is_some(), "{o:#?}");
    assert!(h.upstream.seen().is_empty());

    assert!(engine.store().clear_unknown(&key).await.expect("clears"));
    let o = run(&engine, call(AUTO, "s1", "1", "create_order", arguments)).await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 1);
}

#[tokio::test]
async fn a_caller_that_goes_away_does_not_leave_the_call_half_done() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let caller = tokio::spawn({
        let engine = std::sync::Arc::clone(&engine);
        async move {
            engine
                .call(call(AUTO, "s1", "1", "slow_order", json!({})))
                .await
        }
    });
    h.upstream.wait_for("POST", "/slow").await;
    caller.abort();

    // The call finishes without its caller; the same call then gets its stored outcome.
    let o = within(async {
        loop {
            let o = run(&engine, call(AUTO, "s1", "1", "slow_order", json!({}))).await;
            if o.code != Some(Code::DuplicateInProgress) {
                return o;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        }
    })
    .await;
    assert!(o.is_success() && o.replayed, "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/slow").len(), 1);
}
