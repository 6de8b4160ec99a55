//! Temporary folders and ready-made records.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use purko_protocol::{
    Approval, ApprovalId, ApprovalStatus, Autonomy, DecisionId, Effect, Evaluation, Kind,
    KindSource,
};
use purko_store::{OpenOptions, SqliteStore};
use serde_json::json;
use ulid::Ulid;

/// A folder under the system's temp dir, removed when dropped.
#[derive(Debug)]
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new() -> Self {
        let path = std::env::temp_dir().join(format!("purko-store-test-{}", Ulid::generate()));
        std::fs::create_dir_all(&path).expect("creates the temp dir");
        Self(path)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    pub fn db(&self) -> PathBuf {
        purko_store::database_path(&self.0)
    }

    pub fn open(&self) -> SqliteStore {
        SqliteStore::open(&self.0).expect("opens the store")
    }

    pub fn open_with(&self, options: &OpenOptions) -> SqliteStore {
        options.open(&self.0).expect("opens the store")
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub fn now_ms() -> i64 {
    i64::try_from(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .expect("after 1970")
            .as_millis(),
    )
    .expect("fits")
}

/// A ULID at a given millisecond, with a given tie-breaker.
pub fn ulid_at(ms: i64, n: u128) -> String {
    Ulid::from_parts(u64::try_from(ms).expect("positive"), n).to_string()
}

/// A decision id whose ULID is at `ms`; `kinds` varies the prefix.
pub fn decision_id(ms: i64, n: u128, kinds: Option<&str>) -> DecisionId {
    DecisionId::new(kinds, true, "8c1e22aa", &ulid_at(ms, n))
}

pub fn evaluation(id: DecisionId, tool: &str, effect: Effect) -> Evaluation {
    Evaluation {
        decision_id: id,
        effect,
        code: None,
        tool: tool.to_owned(),
        arguments: json!({"to": "ana@example.com", "body": "hi"}),
        kind: Some(Kind::SendsOut),
        kind_source: Some(KindSource::Inferred),
        kind_reason: Some("argument 'to' is a destination".into()),
        kind_signals: Vec::new(),
        autonomy: Autonomy::Supervised,
        autonomy_cell: None,
        reasons: vec!["sends_out needs a person's yes at supervised".into()],
        matched_rules: Vec::new(),
        destinations: Vec::new(),
        validation_errors: Vec::new(),
        remediation: None,
        inference: true,
        kinds_digest: None,
        policy_digest: "8c1e22aa00".into(),
    }
}

pub fn approval_id() -> ApprovalId {
    ApprovalId::new(&Ulid::generate().to_string())
}

/// A pending approval for `send_email` created at `created` that expires `ttl` ms later.
pub fn approval(agent: &str, session: &str, created: i64, ttl: i64) -> Approval {
    Approval {
        id: approval_id(),
        decision_id: decision_id(created, 1, None),
        agent: agent.to_owned(),
        session: session.to_owned(),
        step: "1".into(),
        tool: "send_email".into(),
        kind: Kind::SendsOut,
        kind_source: KindSource::Inferred,
        kind_reason: "argument 'to' is a destination".into(),
        kind_signals: Vec::new(),
        arguments: json!({"to": "ana@example.com"}),
        arguments_digest: "d1".into(),
        reasons: vec!["sends_out needs a person's yes at supervised".into()],
        created_at_ms: created,
        expires_at_ms: created + ttl,
        status: ApprovalStatus::Pending,
        scope: None,
        decided_at_ms: None,
        decided_by: None,
        comment: None,
    }
}
