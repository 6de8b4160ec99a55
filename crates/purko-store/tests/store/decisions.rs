use pretty_assertions::assert_eq;
use purko_protocol::{Code, Effect, Observation, Status};
use purko_store::{DecisionFilter, DecisionRecord, Error, Outcome, Store};
use serde_json::json;

use crate::support::{TempDir, approval_id, decision_id, evaluation};

fn record(ms: i64, n: u128, agent: &str, tool: &str, effect: Effect) -> DecisionRecord {
    DecisionRecord {
        evaluation: evaluation(decision_id(ms, n, None), tool, effect),
        agent: agent.to_owned(),
        session: format!("s-{agent}"),
        step: n.to_string(),
        created_at_ms: ms,
        outcome: None,
    }
}

fn outcome() -> Outcome {
    Outcome {
        observation: Observation::success(json!({"sent": true})),
        finished_at_ms: 1_700_000_000_500,
        duration_us: 1_234,
        approval_id: Some(approval_id()),
    }
}

#[tokio::test]
async fn a_decision_round_trips_with_its_evaluation_and_outcome() {
    let dir = TempDir::new();
    let store = dir.open();
    let mut with_outcome = record(1_700_000_000_000, 1, "ns/a", "send_email", Effect::Ask);
    with_outcome.outcome = Some(outcome());
    store.record_decision(&with_outcome).await.unwrap();

    let read = store
        .decision(&with_outcome.evaluation.decision_id)
        .await
        .unwrap();
    assert_eq!(read, Some(with_outcome));
}

#[tokio::test]
async fn an_outcome_recorded_later_is_read_back() {
    let dir = TempDir::new();
    let store = dir.open();
    let mut rec = record(1_700_000_000_000, 1, "ns/a", "send_email", Effect::Deny);
    store.record_decision(&rec).await.unwrap();
    let id = rec.evaluation.decision_id.clone();
    assert_eq!(store.decision(&id).await.unwrap(), Some(rec.clone()));

    let refused = Outcome {
        observation: Observation::failure(
            Status::Denied,
            Code::DeniedByPolicy,
            "send_email is denied",
            "ask the operator",
        )
        .with_decision(id.clone()),
        finished_at_ms: 1_700_000_000_001,
        duration_us: 3,
        approval_id: None,
    };
    store.record_outcome(&id, &refused).await.unwrap();
    rec.outcome = Some(refused);
    assert_eq!(store.decision(&id).await.unwrap(), Some(rec));
}

#[tokio::test]
async fn an_outcome_for_a_decision_not_recorded_is_an_error() {
    let dir = TempDir::new();
    let store = dir.open();
    let id = decision_id(1_700_000_000_000, 9, None);
    let err = store.record_outcome(&id, &outcome()).await.unwrap_err();
    assert!(matches!(err, Error::NotFound { .. }), "{err}");
    assert_eq!(store.decision(&id).await.unwrap(), None);
}

#[tokio::test]
async fn filters_select_by_agent_tool_session_and_effect() {
    let dir = TempDir::new();
    let store = dir.open();
    let t = 1_700_000_000_000;
    let all = [
        record(t, 1, "ns/a", "send_email", Effect::Ask),
        record(t + 1, 2, "ns/a", "read_file", Effect::Allow),
        record(t + 2, 3, "ns/b", "send_email", Effect::Deny),
        record(t + 3, 4, "ns/b", "read_file", Effect::Allow),
    ];
    for r in &all {
        store.record_decision(r).await.unwrap();
    }
    let tools = |records: Vec<DecisionRecord>| {
        records
            .into_iter()
            .map(|r| (r.agent, r.evaluation.tool))
            .collect::<Vec<_>>()
    };
    let pair = |a: &str, t: &str| (a.to_owned(), t.to_owned());

    let everything = store.decisions(&DecisionFilter::default()).await.unwrap();
    assert_eq!(
        tools(everything),
        vec![
            pair("ns/b", "read_file"),
            pair("ns/b", "send_email"),
            pair("ns/a", "read_file"),
            pair("ns/a", "send_email"),
        ],
        "newest first"
    );
    let by_agent = DecisionFilter {
        agent: Some("ns/a".into()),
        ..DecisionFilter::default()
    };
    assert_eq!(
        tools(store.decisions(&by_agent).await.unwrap()),
        vec![pair("ns/a", "read_file"), pair("ns/a", "send_email")]
    );
    let by_tool = DecisionFilter {
        tool: Some("send_email".into()),
        ..DecisionFilter::default()
    };
    assert_eq!(
        tools(store.decisions(&by_tool).await.unwrap()),
        vec![pair("ns/b", "send_email"), pair("ns/a", "send_email")]
    );
    let by_session = DecisionFilter {
        session: Some("s-ns/b".into()),
        effect: Some(Effect::Allow),
        ..DecisionFilter::default()
    };
    assert_eq!(
        tools(store.decisions(&by_session).await.unwrap()),
        vec![pair("ns/b", "read_file")]
    );
    let denied = DecisionFilter {
        effect: Some(Effect::Deny),
        ..DecisionFilter::default()
    };
    assert_eq!(
        tools(store.decisions(&denied).await.unwrap()),
        vec![pair("ns/b", "send_email")]
    );
    let nothing = DecisionFilter {
        agent: Some("ns/a".into()),
        effect: Some(Effect::Deny),
        ..DecisionFilter::default()
    };
    assert_eq!(store.decisions(&nothing).await.unwrap(), vec![]);
}

#[tokio::test]
async fn paging_walks_from_newest_to_oldest_by_the_time_in_the_id() {
    let dir = TempDir::new();
    let store = dir.open();
    let t = 1_700_000_000_000;
    // The digest prefixes sort against the times, so only the ULID can order them.
    let kinds = ["ffffffffffff", "000000000000", "888888888888"];
    let mut expected = Vec::new();
    for i in 0..25_i64 {
        let n = u128::try_from(i).unwrap();
        let id = decision_id(t + i, n, Some(kinds[usize::try_from(i).unwrap() % 3]));
        let rec = DecisionRecord {
            evaluation: evaluation(id.clone(), "read_file", Effect::Allow),
            agent: "ns/a".into(),
            session: "s".into(),
            step: i.to_string(),
            created_at_ms: t + i,
            outcome: None,
        };
        store.record_decision(&rec).await.unwrap();
        expected.push(id);
    }
    expected.reverse();

    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let page = store
            .decisions(&DecisionFilter {
                before: before.clone(),
                limit: 10,
                ..DecisionFilter::default()
            })
            .await
            .unwrap();
        if page.is_empty() {
            break;
        }
        assert!(page.len() <= 10);
        before = page.last().map(|r| r.evaluation.decision_id.clone());
        seen.extend(page.into_iter().map(|r| r.evaluation.decision_id));
    }
    assert_eq!(seen, expected);
}

#[tokio::test]
async fn recording_the_same_decision_twice_is_refused() {
    let dir = TempDir::new();
    let store = dir.open();
    let rec = record(1_700_000_000_000, 1, "ns/a", "send_email", Effect::Ask);
    store.record_decision(&rec).await.unwrap();
    assert!(store.record_decision(&rec).await.is_err());
    // The failed write did not take the rest of its batch down with it.
    let other = record(1_700_000_000_001, 2, "ns/a", "send_email", Effect::Ask);
    store.record_decision(&other).await.unwrap();
    assert_eq!(
        store
            .decisions(&DecisionFilter::default())
            .await
            .unwrap()
            .len(),
        2
    );
}

#[tokio::test]
async fn concurrent_writes_are_all_committed() {
    let dir = TempDir::new();
    let store = dir.open();
    let tasks: Vec<_> = (0..200_i64)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let n = u128::try_from(i).unwrap();
                store
                    .record_decision(&record(
                        1_700_000_000_000 + i,
                        n,
                        "ns/a",
                        "t",
                        Effect::Allow,
                    ))
                    .await
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap().unwrap();
    }
    let all = store
        .decisions(&DecisionFilter {
            limit: 1_000,
            ..DecisionFilter::default()
        })
        .await
        .unwrap();
    assert_eq!(all.len(), 200);
}

/// Waits until a decision queued by one store is committed, as another process on the same
/// file sees it (its own reads do not commit the first store's queue).
async fn committed_by_itself(other: &purko_store::SqliteStore, record: &DecisionRecord) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if other
            .decision(&record.evaluation.decision_id)
            .await
            .expect("the store reads")
            .is_some()
        {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "decision {} was never committed",
            record.evaluation.decision_id
        );
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
    }
}

#[tokio::test]
async fn decisions_recorded_later_are_committed_without_anything_else_happening() {
    let dir = TempDir::new();
    let store = dir.open();
    let other = dir.open();
    let read = |n: u128| {
        record(
            1_700_000_000_000 + 10 * i64::try_from(n).unwrap(),
            n,
            "ns/a",
            "read",
            Effect::Allow,
        )
    };
    // The writer sleeps: the first decision wakes it.
    store.record_decision_later(read(1));
    committed_by_itself(&other, &read(1)).await;
    // Right after a commit the writer stays awake for a window, and nothing wakes it: it
    // commits what came at the window's end by itself.
    store.record_decision_later(read(2));
    committed_by_itself(&other, &read(2)).await;
    // After an empty window it sleeps again, and the next decision wakes it.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    store.record_decision_later(read(3));
    committed_by_itself(&other, &read(3)).await;
}

#[tokio::test]
async fn decisions_recorded_later_are_committed_in_a_batch_and_before_the_store_closes() {
    let dir = TempDir::new();
    let store = dir.open();
    for n in 0..100_u128 {
        let ms = 1_700_000_000_000 + i64::try_from(n).unwrap();
        store.record_decision_later(record(ms, n, "ns/a", "read", Effect::Allow));
    }
    let first = record(1_700_000_000_000, 0, "ns/a", "read", Effect::Allow);
    assert_eq!(
        store.decision(&first.evaluation.decision_id).await.unwrap(),
        Some(first),
        "a decision queued a moment ago can be explained at once"
    );
    // An awaited write commits at once, and takes the queued ones with it.
    let awaited = record(1_700_000_001_000, 1_000, "ns/a", "write", Effect::Ask);
    store.record_decision(&awaited).await.unwrap();
    let all = |store: purko_store::SqliteStore| async move {
        store
            .decisions(&DecisionFilter {
                limit: 1_000,
                ..DecisionFilter::default()
            })
            .await
            .unwrap()
            .len()
    };
    assert_eq!(all(store.clone()).await, 101);

    for n in 0..10_u128 {
        let ms = 1_700_000_002_000 + i64::try_from(n).unwrap();
        store.record_decision_later(record(ms, 2_000 + n, "ns/a", "read", Effect::Allow));
    }
    drop(store);
    assert_eq!(
        all(dir.open()).await,
        111,
        "closing the store commits what was queued"
    );
}
