use std::time::Duration;

use purko_protocol::Effect;
use purko_store::{DecisionRecord, Error, OpenOptions, SCHEMA_VERSION, SqliteStore, Store};
use rusqlite::Connection;

use crate::support::{TempDir, decision_id, evaluation};

#[test]
fn a_missing_folder_is_created() {
    let dir = TempDir::new();
    let nested = dir.path().join("a").join(".purko");
    let store = SqliteStore::open(&nested).unwrap();
    assert!(store.path().exists());
    let version: i64 = Connection::open(store.path())
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, SCHEMA_VERSION);
}

#[test]
fn a_file_that_is_not_a_database_is_refused_and_left_alone() {
    let dir = TempDir::new();
    let garbage = b"this is not a database, it is a shopping list: eggs, milk, bread.\n".repeat(64);
    std::fs::write(dir.db(), &garbage).unwrap();
    let err = SqliteStore::open(dir.path()).unwrap_err();
    assert!(matches!(err, Error::NotAStore { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("is not a Purko store (file is not a database)"),
        "{message}"
    );
    assert!(message.contains("move it aside"), "{message}");
    assert!(
        message.contains(&dir.db().display().to_string()),
        "{message}"
    );
    assert!(err.hint().contains("move"), "{}", err.hint());
    assert_eq!(std::fs::read(dir.db()).unwrap(), garbage);
}

#[test]
fn another_programs_database_is_refused() {
    let dir = TempDir::new();
    Connection::open(dir.db())
        .unwrap()
        .execute_batch("CREATE TABLE recipes (name TEXT)")
        .unwrap();
    let before = std::fs::read(dir.db()).unwrap();
    let err = SqliteStore::open(dir.path()).unwrap_err();
    assert!(matches!(err, Error::NotAStore { .. }), "{err:?}");
    assert_eq!(std::fs::read(dir.db()).unwrap(), before);
}

#[test]
fn a_store_from_a_newer_purko_is_refused() {
    let dir = TempDir::new();
    drop(dir.open());
    Connection::open(dir.db())
        .unwrap()
        .execute_batch("PRAGMA user_version = 99")
        .unwrap();
    let err = SqliteStore::open(dir.path()).unwrap_err();
    let Error::NewerSchema {
        found, supported, ..
    } = &err
    else {
        panic!("expected a newer schema error, got {err:?}");
    };
    assert_eq!((*found, *supported), (99, SCHEMA_VERSION));
    assert!(err.to_string().contains("newer"), "{err}");
    assert!(err.hint().contains("upgrade purko"), "{}", err.hint());
    let version: i64 = Connection::open(dir.db())
        .unwrap()
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 99, "the file is left as it was");
}

#[test]
fn a_database_locked_by_another_process_is_reported_after_the_timeout() {
    let dir = TempDir::new();
    let holder = Connection::open(dir.db()).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    let options = OpenOptions::new().busy_timeout(Duration::from_millis(100));
    let err = options.open(dir.path()).unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err:?}");
    assert!(
        err.to_string().contains("is locked by another process"),
        "{err}"
    );
    assert!(err.hint().contains("PURKO_HOME"), "{}", err.hint());
    holder.execute_batch("ROLLBACK").unwrap();
    drop(holder);
    options
        .open(dir.path())
        .expect("opens once the lock is gone");
}

#[tokio::test]
async fn a_write_blocked_by_another_process_reports_the_lock() {
    let dir = TempDir::new();
    let store = dir.open_with(&OpenOptions::new().busy_timeout(Duration::from_millis(100)));
    let holder = Connection::open(dir.db()).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let record = DecisionRecord {
        evaluation: evaluation(decision_id(1_000, 1, None), "t", Effect::Allow),
        agent: "ns/a".into(),
        session: "s".into(),
        step: "1".into(),
        created_at_ms: 1_000,
        outcome: None,
    };
    let err = store.record_decision(&record).await.unwrap_err();
    assert!(matches!(err, Error::Locked { .. }), "{err:?}");
    holder.execute_batch("ROLLBACK").unwrap();
    store.record_decision(&record).await.unwrap();
    assert!(
        store
            .decision(&record.evaluation.decision_id)
            .await
            .unwrap()
            .is_some()
    );
}

#[test]
fn the_store_is_in_wal_mode() {
    let dir = TempDir::new();
    let _store = dir.open();
    let mode: String = Connection::open(dir.db())
        .unwrap()
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
}
