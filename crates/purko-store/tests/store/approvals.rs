use std::time::Duration;

use pretty_assertions::assert_eq;
use purko_protocol::{ApprovalScope, ApprovalStatus};
use purko_store::{Answer, ApprovalFilter, CallKey, Decided, Error, Grant, Store};

use crate::support::{TempDir, approval, approval_id, now_ms};

const MINUTE: i64 = 60_000;

fn approve(by: &str) -> Answer {
    Answer::Approve {
        scope: ApprovalScope::Once,
        comment: Some("fine".into()),
        by: by.to_owned(),
    }
}

fn reject(by: &str) -> Answer {
    Answer::Reject {
        reason: Some("not today".into()),
        by: by.to_owned(),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_concurrent_answers_exactly_the_first_wins() {
    let dir = TempDir::new();
    let store = dir.open();
    let a = approval("ns/a", "s", now_ms(), 10 * MINUTE);
    store.create_approval(&a).await.unwrap();

    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let (store, id) = (store.clone(), a.id.clone());
            tokio::spawn(async move {
                let answer = if i % 2 == 0 {
                    approve(&format!("op{i}"))
                } else {
                    reject(&format!("op{i}"))
                };
                store.decide_approval(&id, &answer, now_ms()).await.unwrap()
            })
        })
        .collect();
    let mut winners = Vec::new();
    let mut already = Vec::new();
    for task in tasks {
        match task.await.unwrap() {
            Decided::Now(a) => winners.push(a),
            Decided::Already(a) => already.push(a),
            Decided::NotFound => panic!("the approval is there"),
        }
    }
    assert_eq!(winners.len(), 1);
    assert_eq!(already.len(), 19);
    let winner = &winners[0];
    assert!(
        already.iter().all(|a| a == winner),
        "everyone sees the first answer"
    );
    assert_eq!(store.approval(&a.id).await.unwrap().as_ref(), Some(winner));
    let expected = if winner.status == ApprovalStatus::Approved {
        Some("fine")
    } else {
        assert_eq!(winner.status, ApprovalStatus::Rejected);
        Some("not today")
    };
    assert_eq!(winner.comment.as_deref(), expected);
}

#[tokio::test]
async fn an_answer_records_who_when_and_how_far() {
    let dir = TempDir::new();
    let store = dir.open();
    let a = approval("ns/a", "s", 1_000, MINUTE);
    store.create_approval(&a).await.unwrap();
    let Decided::Now(decided) = store
        .decide_approval(&a.id, &approve("cli"), 2_000)
        .await
        .unwrap()
    else {
        panic!("the first answer wins");
    };
    let mut expected = a.clone();
    expected.status = ApprovalStatus::Approved;
    expected.scope = Some(ApprovalScope::Once);
    expected.decided_at_ms = Some(2_000);
    expected.decided_by = Some("cli".into());
    expected.comment = Some("fine".into());
    assert_eq!(decided, expected);
    assert!(
        !store
            .has_grant("ns/a", "s", "send_email", "d1")
            .await
            .unwrap(),
        "once is not a grant"
    );
}

#[tokio::test]
async fn deciding_an_unknown_approval_finds_nothing() {
    let dir = TempDir::new();
    let store = dir.open();
    assert_eq!(
        store
            .decide_approval(&approval_id(), &approve("cli"), 1)
            .await
            .unwrap(),
        Decided::NotFound
    );
}

#[tokio::test]
async fn an_answer_after_expiry_finds_it_expired() {
    let dir = TempDir::new();
    let store = dir.open();
    let a = approval("ns/a", "s", 1_000, MINUTE);
    store.create_approval(&a).await.unwrap();
    let Decided::Already(expired) = store
        .decide_approval(&a.id, &approve("operator"), 1_000 + MINUTE)
        .await
        .unwrap()
    else {
        panic!("a late answer does not win");
    };
    assert_eq!(expired.status, ApprovalStatus::Expired);
    assert_eq!(expired.decided_by.as_deref(), Some("expiry"));
    assert_eq!(expired.decided_at_ms, Some(1_000 + MINUTE));
    assert_eq!(expired.scope, None);
    assert_eq!(store.approval(&a.id).await.unwrap(), Some(expired));
}

#[tokio::test]
async fn expire_approvals_marks_only_pending_ones_that_are_due() {
    let dir = TempDir::new();
    let store = dir.open();
    let due = approval("ns/a", "s", 1_000, 1_000);
    let later = approval("ns/a", "s", 1_000, 10_000);
    let answered = approval("ns/a", "s", 1_000, 1_000);
    for a in [&due, &later, &answered] {
        store.create_approval(a).await.unwrap();
    }
    store
        .decide_approval(&answered.id, &reject("cli"), 1_500)
        .await
        .unwrap();

    let expired = store.expire_approvals(5_000).await.unwrap();
    assert_eq!(
        expired.iter().map(|a| &a.id).collect::<Vec<_>>(),
        vec![&due.id]
    );
    assert_eq!(expired[0].status, ApprovalStatus::Expired);
    assert_eq!(
        store.approval(&later.id).await.unwrap().unwrap().status,
        ApprovalStatus::Pending
    );
    assert_eq!(
        store.approval(&answered.id).await.unwrap().unwrap().status,
        ApprovalStatus::Rejected
    );
    assert_eq!(
        store.expire_approvals(5_000).await.unwrap(),
        vec![],
        "only once"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_sees_the_approval_expire_at_its_deadline() {
    let dir = TempDir::new();
    let store = dir.open();
    let a = approval("ns/a", "s", now_ms(), 150);
    store.create_approval(&a).await.unwrap();
    let done = store.wait_approval(&a.id).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Expired);
    assert_eq!(done.decided_by.as_deref(), Some("expiry"));
    assert_eq!(store.approval(&a.id).await.unwrap(), Some(done));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiter_is_woken_by_an_answer_in_this_process() {
    let dir = TempDir::new();
    let store = dir.open();
    let a = approval("ns/a", "s", now_ms(), 10 * MINUTE);
    store.create_approval(&a).await.unwrap();
    let waiter = tokio::spawn({
        let (store, id) = (store.clone(), a.id.clone());
        async move { store.wait_approval(&id).await }
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    let Decided::Now(decided) = store
        .decide_approval(&a.id, &reject("operator"), now_ms())
        .await
        .unwrap()
    else {
        panic!("the first answer wins");
    };
    assert_eq!(waiter.await.unwrap().unwrap(), decided);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_from_another_process_releases_a_waiter() {
    let dir = TempDir::new();
    let here = dir.open();
    let a = approval("ns/a", "s", now_ms(), 10 * MINUTE);
    here.create_approval(&a).await.unwrap();
    let waiter = tokio::spawn({
        let (store, id) = (here.clone(), a.id.clone());
        async move { store.wait_approval(&id).await }
    });
    // A second store on the same file stands in for another purko process.
    let there = dir.open();
    tokio::time::sleep(Duration::from_millis(30)).await;
    let Decided::Now(decided) = there
        .decide_approval(&a.id, &approve("cli"), now_ms())
        .await
        .unwrap()
    else {
        panic!("the first answer wins");
    };
    let seen = tokio::time::timeout(Duration::from_secs(30), waiter)
        .await
        .expect("the waiter notices the other process's answer")
        .unwrap()
        .unwrap();
    assert_eq!(seen, decided);
}

#[tokio::test]
async fn waiting_for_an_unknown_approval_is_an_error() {
    let dir = TempDir::new();
    let store = dir.open();
    let err = store.wait_approval(&approval_id()).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
}

#[tokio::test]
async fn an_approval_survives_reopening_the_store() {
    let dir = TempDir::new();
    let a = approval("ns/a", "s", 1_000, MINUTE);
    {
        let store = dir.open();
        store.create_approval(&a).await.unwrap();
    }
    let store = dir.open();
    assert_eq!(store.approval(&a.id).await.unwrap(), Some(a.clone()));
    assert!(matches!(
        store
            .decide_approval(&a.id, &approve("cli"), 2_000)
            .await
            .unwrap(),
        Decided::Now(_)
    ));
}

#[tokio::test]
async fn approvals_are_listed_newest_first_and_filtered() {
    let dir = TempDir::new();
    let store = dir.open();
    let first = approval("ns/a", "s", 1_000, MINUTE);
    let second = approval("ns/b", "s", 2_000, MINUTE);
    let third = approval("ns/a", "s", 3_000, MINUTE);
    for a in [&first, &second, &third] {
        store.create_approval(a).await.unwrap();
    }
    store
        .decide_approval(&third.id, &approve("cli"), 3_500)
        .await
        .unwrap();
    let ids =
        |list: Vec<purko_protocol::Approval>| list.into_iter().map(|a| a.id).collect::<Vec<_>>();

    let all = store.approvals(&ApprovalFilter::default()).await.unwrap();
    assert_eq!(
        ids(all),
        vec![third.id.clone(), second.id.clone(), first.id.clone()]
    );
    let pending_a = ApprovalFilter {
        status: Some(ApprovalStatus::Pending),
        agent: Some("ns/a".into()),
        ..ApprovalFilter::default()
    };
    assert_eq!(
        ids(store.approvals(&pending_a).await.unwrap()),
        vec![first.id.clone()]
    );
    let one = ApprovalFilter {
        limit: 1,
        ..ApprovalFilter::default()
    };
    assert_eq!(
        ids(store.approvals(&one).await.unwrap()),
        vec![third.id.clone()]
    );
}

#[tokio::test]
async fn the_latest_approval_for_a_call_is_found_whatever_its_status() {
    let dir = TempDir::new();
    let store = dir.open();
    let old = approval("ns/a", "s", 1_000, MINUTE);
    let new = approval("ns/a", "s", 2_000, MINUTE);
    let other_session = approval("ns/a", "t", 3_000, MINUTE);
    for a in [&old, &new, &other_session] {
        store.create_approval(a).await.unwrap();
    }
    store
        .decide_approval(&new.id, &reject("cli"), 2_500)
        .await
        .unwrap();
    let call = CallKey {
        agent: "ns/a".into(),
        session: "s".into(),
        step: "1".into(),
        tool: "send_email".into(),
        arguments_digest: "d1".into(),
    };
    let latest = store.latest_approval_for(&call).await.unwrap().unwrap();
    assert_eq!(
        (latest.id, latest.status),
        (new.id, ApprovalStatus::Rejected)
    );
    let other_args = CallKey {
        arguments_digest: "d2".into(),
        ..call
    };
    assert_eq!(store.latest_approval_for(&other_args).await.unwrap(), None);
}

#[tokio::test]
async fn approving_for_the_session_stores_a_grant() {
    let dir = TempDir::new();
    let store = dir.open();
    let a = approval("ns/a", "s", 1_000, MINUTE);
    store.create_approval(&a).await.unwrap();
    let session = Answer::Approve {
        scope: ApprovalScope::Session,
        comment: None,
        by: "operator".into(),
    };
    store.decide_approval(&a.id, &session, 2_000).await.unwrap();
    assert!(
        store
            .has_grant("ns/a", "s", "send_email", "d1")
            .await
            .unwrap()
    );
    assert!(
        !store
            .has_grant("ns/a", "s", "send_email", "d2")
            .await
            .unwrap()
    );
    assert!(
        !store
            .has_grant("ns/a", "other", "send_email", "d1")
            .await
            .unwrap()
    );
    assert!(
        !store
            .has_grant("ns/b", "s", "send_email", "d1")
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn grants_are_kept_per_agent_session_tool_and_arguments() {
    let dir = TempDir::new();
    let store = dir.open();
    let grant = Grant {
        agent: "ns/a".into(),
        session: "s".into(),
        tool: "write_file".into(),
        arguments_digest: "abc".into(),
        approval_id: approval_id(),
        created_at_ms: 1,
    };
    assert!(
        !store
            .has_grant("ns/a", "s", "write_file", "abc")
            .await
            .unwrap()
    );
    store.add_grant(&grant).await.unwrap();
    store.add_grant(&grant).await.unwrap();
    assert!(
        store
            .has_grant("ns/a", "s", "write_file", "abc")
            .await
            .unwrap()
    );
    assert!(
        !store
            .has_grant("ns/a", "s", "send_email", "abc")
            .await
            .unwrap()
    );
}
