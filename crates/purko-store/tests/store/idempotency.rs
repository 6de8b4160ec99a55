use pretty_assertions::assert_eq;
use purko_protocol::Observation;
use purko_store::{Claim, ClaimRequest, Error, ProcessIdentity, RecordState, RunId, Store};
use serde_json::json;

use crate::support::{TempDir, decision_id, now_ms};

const DAY: i64 = 24 * 60 * 60 * 1_000;

fn request(run: &RunId, digest: &str, now: i64) -> ClaimRequest {
    ClaimRequest {
        key: "k1".into(),
        agent: "ns/a".into(),
        tool: "send_email".into(),
        arguments_digest: digest.to_owned(),
        decision_id: decision_id(now, 1, None),
        run: run.clone(),
        now_ms: now,
        ttl_ms: DAY,
    }
}

fn sent() -> Observation {
    Observation::success(json!({"message_id": "m-1"}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn of_twenty_identical_claims_exactly_one_is_claimed() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let run = store.start_run(now).await.unwrap();
    let tasks: Vec<_> = (0..20)
        .map(|_| {
            let (store, req) = (store.clone(), request(&run, "d1", now));
            tokio::spawn(async move { store.claim(&req).await.unwrap() })
        })
        .collect();
    let mut claimed = 0;
    for task in tasks {
        match task.await.unwrap() {
            Claim::Claimed => claimed += 1,
            Claim::InProgress { since_ms } => assert_eq!(since_ms, now),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(claimed, 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claims_from_two_processes_are_atomic_too() {
    let dir = TempDir::new();
    let stores = [dir.open(), dir.open()];
    let now = now_ms();
    let run = stores[0].start_run(now).await.unwrap();
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let (store, req) = (stores[i % 2].clone(), request(&run, "d1", now));
            tokio::spawn(async move { store.claim(&req).await.unwrap() })
        })
        .collect();
    let mut claimed = 0;
    for task in tasks {
        if task.await.unwrap() == Claim::Claimed {
            claimed += 1;
        }
    }
    assert_eq!(claimed, 1);
}

#[tokio::test]
async fn a_completed_call_is_replayed() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let run = store.start_run(now).await.unwrap();
    assert_eq!(
        store.claim(&request(&run, "d1", now)).await.unwrap(),
        Claim::Claimed
    );
    store.complete("k1", &run, &sent(), now + 5).await.unwrap();
    assert_eq!(
        store.claim(&request(&run, "d1", now + 10)).await.unwrap(),
        Claim::Replay(sent())
    );
    let record = store.idempotency_record("k1").await.unwrap().unwrap();
    assert_eq!(record.state, RecordState::Done);
    assert_eq!(record.finished_at_ms, Some(now + 5));
    assert_eq!(record.observation, Some(sent()));
    assert_eq!(record.run, run);
}

#[tokio::test]
async fn the_same_key_with_other_arguments_is_a_mismatch() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let run = store.start_run(now).await.unwrap();
    store.claim(&request(&run, "d1", now)).await.unwrap();
    assert_eq!(
        store.claim(&request(&run, "d2", now)).await.unwrap(),
        Claim::Mismatch {
            stored_digest: "d1".into()
        }
    );
    let other_agent = ClaimRequest {
        agent: "ns/b".into(),
        ..request(&run, "d1", now)
    };
    assert!(matches!(
        store.claim(&other_agent).await.unwrap(),
        Claim::Mismatch { .. }
    ));
}

#[tokio::test]
async fn after_its_ttl_a_key_can_be_claimed_again() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let run = store.start_run(now).await.unwrap();
    store.claim(&request(&run, "d1", now)).await.unwrap();
    store
        .complete("k1", &run, &sent(), now + 1_000)
        .await
        .unwrap();
    // The TTL of a done record runs from its end.
    let mut almost = request(&run, "d2", now + DAY);
    almost.ttl_ms = DAY;
    assert!(matches!(
        store.claim(&almost).await.unwrap(),
        Claim::Mismatch { .. }
    ));
    store.heartbeat(&run, now + DAY + 1_000).await.unwrap();
    let after = request(&run, "d2", now + DAY + 1_000);
    assert_eq!(store.claim(&after).await.unwrap(), Claim::Claimed);
    let record = store.idempotency_record("k1").await.unwrap().unwrap();
    assert_eq!(
        (record.state, record.arguments_digest),
        (RecordState::Running, "d2".into())
    );
}

#[tokio::test]
async fn a_released_claim_is_forgotten() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let run = store.start_run(now).await.unwrap();
    store.claim(&request(&run, "d1", now)).await.unwrap();
    store.release("k1", &run).await.unwrap();
    assert_eq!(store.idempotency_record("k1").await.unwrap(), None);
    assert_eq!(
        store.claim(&request(&run, "d2", now)).await.unwrap(),
        Claim::Claimed
    );
}

#[tokio::test]
async fn a_claim_left_by_a_vanished_process_is_unknown_until_cleared() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let host = store_host();
    let ghost = ProcessIdentity {
        pid: 4_000_000_000,
        host,
        start_ticks: Some(1),
    };
    let dead = store.start_run_as(&ghost, now).await.unwrap();
    let alive = store.start_run(now).await.unwrap();
    store.claim(&request(&dead, "d1", now)).await.unwrap();

    assert_eq!(
        store.claim(&request(&alive, "d1", now + 1)).await.unwrap(),
        Claim::Unknown { since_ms: now }
    );
    assert_eq!(
        store.idempotency_record("k1").await.unwrap().unwrap().state,
        RecordState::Unknown
    );
    // It stays unknown: nobody can tell whether the call took effect.
    assert_eq!(
        store
            .claim(&request(&alive, "d1", now + 2 * DAY))
            .await
            .unwrap(),
        Claim::Unknown { since_ms: now }
    );
    assert!(store.clear_unknown("k1").await.unwrap());
    assert!(!store.clear_unknown("k1").await.unwrap(), "only once");
    assert_eq!(
        store.claim(&request(&alive, "d1", now + 3)).await.unwrap(),
        Claim::Claimed
    );
}

#[tokio::test]
async fn a_claim_whose_run_stopped_beating_is_unknown() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let run = store.start_run(now - 60_000).await.unwrap();
    store
        .claim(&request(&run, "d1", now - 60_000))
        .await
        .unwrap();
    assert_eq!(
        store.claim(&request(&run, "d1", now)).await.unwrap(),
        Claim::Unknown {
            since_ms: now - 60_000
        }
    );
    // The run turns out to be alive after all and finishes: its outcome is kept.
    store.complete("k1", &run, &sent(), now + 1).await.unwrap();
    assert_eq!(
        store.claim(&request(&run, "d1", now + 2)).await.unwrap(),
        Claim::Replay(sent())
    );
}

#[tokio::test]
async fn a_heartbeat_keeps_a_claim_in_progress() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let run = store.start_run(now - 60_000).await.unwrap();
    store
        .claim(&request(&run, "d1", now - 60_000))
        .await
        .unwrap();
    store.heartbeat(&run, now - 1_000).await.unwrap();
    assert_eq!(
        store.claim(&request(&run, "d1", now)).await.unwrap(),
        Claim::InProgress {
            since_ms: now - 60_000
        }
    );
}

#[tokio::test]
async fn completing_a_key_this_run_does_not_hold_is_an_error() {
    let dir = TempDir::new();
    let store = dir.open();
    let now = now_ms();
    let run = store.start_run(now).await.unwrap();
    let err = store.complete("k1", &run, &sent(), now).await.unwrap_err();
    assert!(matches!(err, Error::ClaimLost { .. }), "{err}");
}

#[tokio::test]
async fn the_secret_is_generated_once_and_survives_reopening() {
    let dir = TempDir::new();
    let first = {
        let store = dir.open();
        let secret = store.idempotency_secret().await.unwrap();
        assert_eq!(store.idempotency_secret().await.unwrap(), secret);
        secret
    };
    assert_ne!(first, [0; 32]);
    let store = dir.open();
    assert_eq!(store.idempotency_secret().await.unwrap(), first);
    let other = TempDir::new();
    assert_ne!(other.open().idempotency_secret().await.unwrap(), first);
}

fn store_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}
