//! The approval gate: ask, answer, wait, expire, grants, restarts and the webhook.

use std::sync::Arc;

use pretty_assertions::assert_eq;
use purko_protocol::{ApprovalScope, ApprovalStatus, Code, Status};
use purko_store::Decided;
use serde_json::json;

use crate::support::{Harness, approve, assert_refused, call, pending_id, reject, run, within};

const SHOP: &str = "test/shop";

fn is_hex64(key: &str) -> bool {
    key.len() == 64
        && key
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

#[tokio::test]
async fn a_write_asks_then_runs_once_after_approval_and_replays_after() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let order = || {
        call(
            SHOP,
            "s1",
            "1",
            "create_order",
            json!({"item": "apple", "quantity": 2}),
        )
    };

    let first = run(&engine, order()).await;
    let id = pending_id(&first);
    assert!(first.decision_id.is_some(), "{first:#?}");
    assert_eq!(first.code, None);
    let again = run(&engine, order()).await;
    assert_eq!(
        pending_id(&again),
        id,
        "the same call finds the same approval"
    );
    assert!(h.upstream.seen_at("POST", "/orders").is_empty());

    assert!(matches!(
        approve(&engine, &id, ApprovalScope::Once).await,
        Decided::Now(_)
    ));
    let done = run(&engine, order()).await;
    assert_eq!(done.status, Status::Success, "{done:#?}");
    assert!(!done.replayed);
    assert_eq!(
        done.observation,
        Some(
            json!({"status": 201, "body": {"order": 1, "received": {"item": "apple", "quantity": 2}}})
        )
    );
    let posts = h.upstream.seen_at("POST", "/orders");
    assert_eq!(posts.len(), 1);
    let key = posts[0]
        .header("idempotency-key")
        .expect("an Idempotency-Key header");
    assert!(is_hex64(key), "{key}");

    let replay = run(&engine, order()).await;
    assert_eq!(replay.status, Status::Success, "{replay:#?}");
    assert!(replay.replayed, "{replay:#?}");
    assert_eq!(replay.observation, done.observation);
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 1);

    let record = engine
        .store()
        .decision(done.decision_id.as_ref().expect("a decision id"))
        .await
        .expect("reads")
        .expect("the decision is recorded");
    let outcome = record.outcome.expect("with its outcome");
    assert_eq!(outcome.approval_id, Some(id));
    assert_eq!(outcome.observation.status, Status::Success);
}

#[tokio::test]
async fn what_executes_is_exactly_what_was_approved() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    // Key order and nesting as a model might send them; the digest is canonical.
    let arguments = json!({"quantity": 7, "item": "pear", "note": {"gift": true, "wrap": "blue"}});
    let first = run(
        &engine,
        call(SHOP, "s1", "1", "create_order", arguments.clone()),
    )
    .await;
    let id = pending_id(&first);
    let stored = engine
        .store()
        .approval(&id)
        .await
        .expect("reads")
        .expect("the approval is stored");
    assert_eq!(stored.arguments, arguments);
    assert_eq!(stored.status, ApprovalStatus::Pending);

    approve(&engine, &id, ApprovalScope::Once).await;
    let done = run(
        &engine,
        call(SHOP, "s1", "1", "create_order", arguments.clone()),
    )
    .await;
    assert_eq!(done.status, Status::Success, "{done:#?}");
    let posts = h.upstream.seen_at("POST", "/orders");
    assert_eq!(posts.len(), 1);
    assert_eq!(posts[0].json(), stored.arguments);
}

#[tokio::test]
async fn a_rejected_call_is_answered_with_the_reason_and_never_runs() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let order = || {
        call(
            SHOP,
            "s1",
            "1",
            "create_order",
            json!({"item": "apple", "quantity": 1}),
        )
    };
    let id = pending_id(&run(&engine, order()).await);

    assert!(matches!(
        reject(&engine, &id, "we are out of apples").await,
        Decided::Now(_)
    ));
    let o = run(&engine, order()).await;
    assert_refused(&o, Status::Rejected, Code::ApprovalRejected);
    assert!(
        o.message
            .as_deref()
            .is_some_and(|m| m.contains("we are out of apples")),
        "{o:#?}"
    );
    assert_eq!(o.approval_id, Some(id.clone()));
    // A late yes does not turn it around: the first answer won.
    assert!(matches!(
        approve(&engine, &id, ApprovalScope::Once).await,
        Decided::Already(_)
    ));
    let o = run(&engine, order()).await;
    assert_eq!(o.code, Some(Code::ApprovalRejected));
    assert!(h.upstream.seen_at("POST", "/orders").is_empty());
}

#[tokio::test]
async fn a_waiting_call_expires_when_nobody_answers() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let mut order = call(
        "test/hasty",
        "s1",
        "1",
        "create_order",
        json!({"item": "apple", "quantity": 1}),
    );
    order.wait = Some(true);

    let o = run(&engine, order).await;
    assert_refused(&o, Status::Rejected, Code::ApprovalExpired);
    let id = o.approval_id.clone().expect("names the approval");
    let stored = engine
        .store()
        .approval(&id)
        .await
        .expect("reads")
        .expect("stored");
    assert_eq!(stored.status, ApprovalStatus::Expired);
    assert!(h.upstream.seen_at("POST", "/orders").is_empty());
}

#[tokio::test]
async fn a_waiting_call_is_released_by_an_approval_from_another_task() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let mut order = call(
        SHOP,
        "s1",
        "1",
        "create_order",
        json!({"item": "apple", "quantity": 3}),
    );
    order.wait = Some(true);

    let waiting = tokio::spawn({
        let engine = Arc::clone(&engine);
        async move { engine.call(order).await }
    });
    // The approval is stored before anyone is asked: find it in the store.
    let approval = within(async {
        loop {
            let pending = engine
                .store()
                .approvals(&purko_store::ApprovalFilter {
                    status: Some(ApprovalStatus::Pending),
                    ..Default::default()
                })
                .await
                .expect("lists");
            if let Some(a) = pending.into_iter().next() {
                return a;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(!waiting.is_finished());
    let answerer = tokio::spawn({
        let engine = Arc::clone(&engine);
        async move { approve(&engine, &approval.id, ApprovalScope::Once).await }
    });
    assert!(matches!(
        within(answerer).await.expect("joins"),
        Decided::Now(_)
    ));

    let o = within(waiting)
        .await
        .expect("joins")
        .expect("the engine answers");
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 1);
}

#[tokio::test]
async fn approve_for_this_session_covers_the_same_call_in_that_session_only() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let apple = json!({"item": "apple", "quantity": 1});
    let id = pending_id(
        &run(
            &engine,
            call(SHOP, "s1", "1", "create_order", apple.clone()),
        )
        .await,
    );
    approve(&engine, &id, ApprovalScope::Session).await;
    let o = run(
        &engine,
        call(SHOP, "s1", "1", "create_order", apple.clone()),
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");

    // Step 2, same session, same arguments: runs without a new approval.
    let o = run(
        &engine,
        call(SHOP, "s1", "2", "create_order", apple.clone()),
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert!(!o.replayed, "a new step is a new execution: {o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 2);

    // Another session asks again.
    let other_session = run(
        &engine,
        call(SHOP, "s2", "1", "create_order", apple.clone()),
    )
    .await;
    let other_session_id = pending_id(&other_session);
    assert_ne!(other_session_id, id);
    // Other arguments ask again.
    let pear = run(
        &engine,
        call(
            SHOP,
            "s1",
            "3",
            "create_order",
            json!({"item": "pear", "quantity": 1}),
        ),
    )
    .await;
    assert_ne!(pending_id(&pear), id);
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 2);

    let pending = engine
        .store()
        .approvals(&purko_store::ApprovalFilter {
            status: Some(ApprovalStatus::Pending),
            ..Default::default()
        })
        .await
        .expect("lists");
    assert_eq!(pending.len(), 2);
}

#[tokio::test]
async fn an_approval_survives_a_restart() {
    let h = Harness::start().await;
    let order = || {
        call(
            SHOP,
            "s1",
            "1",
            "create_order",
            json!({"item": "apple", "quantity": 4}),
        )
    };
    let id = {
        let engine = h.engine().await;
        pending_id(&run(&engine, order()).await)
    };

    let engine = h.engine().await;
    let o = run(&engine, order()).await;
    assert_eq!(
        pending_id(&o),
        id,
        "the new process finds the stored approval"
    );
    assert!(matches!(
        approve(&engine, &id, ApprovalScope::Once).await,
        Decided::Now(_)
    ));
    let o = run(&engine, order()).await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 1);
}

#[tokio::test]
async fn the_webhook_hears_of_each_new_approval() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let first = pending_id(
        &run(
            &engine,
            call(
                SHOP,
                "s1",
                "1",
                "create_order",
                json!({"item": "apple", "quantity": 1}),
            ),
        )
        .await,
    );
    let hooks = h.upstream.wait_for("POST", "/hook").await;
    let body = hooks[0].json();
    assert_eq!(body["type"], "approval.created");
    assert_eq!(body["approval"]["id"], first.as_str());
    assert_eq!(body["approval"]["tool"], "create_order");
    assert_eq!(
        body["approval"]["arguments"],
        json!({"item": "apple", "quantity": 1})
    );
    let text = body["text"].as_str().expect("a text for chat webhooks");
    assert!(
        text.contains("create_order") && text.contains(first.as_str()),
        "{text}"
    );
    assert_eq!(hooks[0].header("x-source"), Some("purko-test"));

    // The same call again is the same approval: no second announcement. A new call is.
    run(
        &engine,
        call(
            SHOP,
            "s1",
            "1",
            "create_order",
            json!({"item": "apple", "quantity": 1}),
        ),
    )
    .await;
    let second = pending_id(
        &run(
            &engine,
            call(
                SHOP,
                "s1",
                "2",
                "create_order",
                json!({"item": "pear", "quantity": 1}),
            ),
        )
        .await,
    );
    within(async {
        while h.upstream.seen_at("POST", "/hook").len() < 2 {
            tokio::time::sleep(std::time::Duration::from_millis(25)).await;
        }
    })
    .await;
    // Give a stray duplicate a moment to show up.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let ids: Vec<String> = h
        .upstream
        .seen_at("POST", "/hook")
        .iter()
        .map(|s| {
            s.json()["approval"]["id"]
                .as_str()
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    assert_eq!(ids, vec![first.to_string(), second.to_string()]);
}

/// An asker (the gateway's elicitation, in production) that reports each ask and answers what
/// the test sends it; a sender dropped unanswered means "this channel cannot answer".
struct Scripted {
    asked: tokio::sync::mpsc::UnboundedSender<purko_protocol::Approval>,
    answers: tokio::sync::Mutex<tokio::sync::mpsc::UnboundedReceiver<Option<purko_store::Answer>>>,
}

impl purko_engine::Asker for Scripted {
    fn ask<'a>(&'a self, approval: &'a purko_protocol::Approval) -> purko_engine::AskFuture<'a> {
        Box::pin(async move {
            let _ = self.asked.send(approval.clone());
            self.answers.lock().await.recv().await.flatten()
        })
    }
}

type Script = (
    Arc<Scripted>,
    tokio::sync::mpsc::UnboundedReceiver<purko_protocol::Approval>,
    tokio::sync::mpsc::UnboundedSender<Option<purko_store::Answer>>,
);

fn scripted() -> Script {
    let (asked, seen) = tokio::sync::mpsc::unbounded_channel();
    let (answer, answers) = tokio::sync::mpsc::unbounded_channel();
    let asker = Arc::new(Scripted {
        asked,
        answers: tokio::sync::Mutex::new(answers),
    });
    (asker, seen, answer)
}

fn waiting_order(step: &str, quantity: u32) -> purko_engine::CallRequest {
    let mut order = call(
        SHOP,
        "s1",
        step,
        "create_order",
        json!({"item": "plum", "quantity": quantity}),
    );
    order.wait = Some(true);
    order
}

#[tokio::test]
async fn the_asker_and_the_api_race_for_an_approval_and_the_first_answer_wins() {
    let h = Harness::start().await;
    let engine = h.engine().await;

    // The client's person answers first: a no, which a later yes from the API cannot undo.
    let (asker, mut seen, answer) = scripted();
    let waiting = tokio::spawn({
        let engine = Arc::clone(&engine);
        let asker: Arc<dyn purko_engine::Asker> = asker.clone();
        async move {
            engine
                .call_with_asker(waiting_order("1", 1), Some(asker))
                .await
        }
    });
    let asked = within(seen.recv()).await.expect("the person is asked");
    let stored = engine.store().approval(&asked.id).await.expect("reads");
    assert_eq!(
        stored.map(|a| a.status),
        Some(ApprovalStatus::Pending),
        "stored before anyone is asked"
    );
    answer
        .send(Some(purko_store::Answer::Reject {
            reason: Some("declined in the client".into()),
            by: "elicitation".into(),
        }))
        .expect("the asker listens");
    let o = within(waiting).await.expect("joins").expect("answers");
    assert_refused(&o, Status::Rejected, Code::ApprovalRejected);
    assert!(
        o.message
            .as_deref()
            .is_some_and(|m| m.contains("declined in the client")),
        "{o:#?}"
    );
    assert!(matches!(
        approve(&engine, &asked.id, ApprovalScope::Once).await,
        Decided::Already(_)
    ));
    let stored = engine.store().approval(&asked.id).await.expect("reads");
    let stored = stored.expect("stored");
    assert_eq!(stored.status, ApprovalStatus::Rejected);
    assert_eq!(stored.decided_by.as_deref(), Some("elicitation"));
    assert!(h.upstream.seen_at("POST", "/orders").is_empty());

    // The API answers first: the call runs once, and the person's late answer is never taken.
    let (asker, mut seen, answer) = scripted();
    let waiting = tokio::spawn({
        let engine = Arc::clone(&engine);
        let asker: Arc<dyn purko_engine::Asker> = asker.clone();
        async move {
            engine
                .call_with_asker(waiting_order("2", 2), Some(asker))
                .await
        }
    });
    let asked = within(seen.recv()).await.expect("the person is asked");
    assert!(matches!(
        approve(&engine, &asked.id, ApprovalScope::Once).await,
        Decided::Now(_)
    ));
    let o = within(waiting).await.expect("joins").expect("answers");
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 1);
    let stored = engine.store().approval(&asked.id).await.expect("reads");
    assert_eq!(
        stored.expect("stored").decided_by.as_deref(),
        Some("operator")
    );
    // The ask was given up when the store answered: a late answer from it changes nothing.
    let _ = answer.send(Some(purko_store::Answer::Reject {
        reason: None,
        by: "elicitation".into(),
    }));
    let stored = engine.store().approval(&asked.id).await.expect("reads");
    assert_eq!(stored.expect("stored").status, ApprovalStatus::Approved);
}

#[tokio::test]
async fn an_asker_that_cannot_answer_leaves_the_call_waiting_for_the_api() {
    let h = Harness::start().await;
    let engine = h.engine().await;
    let (asker, mut seen, answer) = scripted();
    let waiting = tokio::spawn({
        let engine = Arc::clone(&engine);
        let asker: Arc<dyn purko_engine::Asker> = asker.clone();
        async move {
            engine
                .call_with_asker(waiting_order("1", 4), Some(asker))
                .await
        }
    });
    let asked = within(seen.recv()).await.expect("the person is asked");
    answer.send(None).expect("the asker listens");
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    assert!(!waiting.is_finished(), "still waiting for another answer");
    assert!(matches!(
        approve(&engine, &asked.id, ApprovalScope::Once).await,
        Decided::Now(_)
    ));
    let o = within(waiting).await.expect("joins").expect("answers");
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(h.upstream.seen_at("POST", "/orders").len(), 1);
}
