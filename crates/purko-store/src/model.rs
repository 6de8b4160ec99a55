//! The records the store keeps and the questions it answers. Plain data: every backend speaks
//! these types, so the same tests prove the same semantics for each.

use std::fmt;

use purko_protocol::{
    Approval, ApprovalId, ApprovalScope, ApprovalStatus, DecisionId, Effect, Evaluation,
    Observation,
};

/// One judged call, as the audit log keeps it.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct DecisionRecord {
    pub evaluation: Evaluation,
    /// `namespace/name`.
    pub agent: String,
    pub session: String,
    pub step: String,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    /// How the call ended; `None` until it has.
    pub outcome: Option<Outcome>,
}

/// How a judged call ended.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Outcome {
    pub observation: Observation,
    /// Unix milliseconds.
    pub finished_at_ms: i64,
    pub duration_us: u64,
    /// The approval the call waited for, if it needed one.
    pub approval_id: Option<ApprovalId>,
}

/// Which decisions to list. Newest first; `before` pages towards older ones.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecisionFilter {
    pub agent: Option<String>,
    pub tool: Option<String>,
    pub session: Option<String>,
    pub effect: Option<Effect>,
    /// Only decisions older than this one (by the time in its ULID).
    pub before: Option<DecisionId>,
    pub limit: usize,
}

impl Default for DecisionFilter {
    /// Everything, the newest [`DEFAULT_LIMIT`] first.
    fn default() -> Self {
        Self {
            agent: None,
            tool: None,
            session: None,
            effect: None,
            before: None,
            limit: DEFAULT_LIMIT,
        }
    }
}

/// How many rows a default filter returns.
pub const DEFAULT_LIMIT: usize = 100;

/// Which approvals to list. Newest first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApprovalFilter {
    pub status: Option<ApprovalStatus>,
    pub agent: Option<String>,
    pub limit: usize,
}

impl Default for ApprovalFilter {
    /// Every approval, the newest [`DEFAULT_LIMIT`] first.
    fn default() -> Self {
        Self {
            status: None,
            agent: None,
            limit: DEFAULT_LIMIT,
        }
    }
}

/// What makes two calls "the same call" for approvals.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CallKey {
    pub agent: String,
    pub session: String,
    pub step: String,
    pub tool: String,
    pub arguments_digest: String,
}

/// A person's answer to an approval.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Answer {
    Approve {
        scope: ApprovalScope,
        comment: Option<String>,
        /// `operator`, `cli`, `elicitation`, ...
        by: String,
    },
    Reject {
        reason: Option<String>,
        by: String,
    },
}

/// What came of an answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Decided {
    /// This answer won; the approval as it now stands.
    Now(Approval),
    /// Someone answered first, or it had expired: the approval as it stands.
    Already(Approval),
    /// No approval has that id.
    NotFound,
}

/// "Approve for this session": the same tool with the same arguments may run again in the same
/// session without asking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grant {
    pub agent: String,
    pub session: String,
    pub tool: String,
    pub arguments_digest: String,
    pub approval_id: ApprovalId,
    pub created_at_ms: i64,
}

/// One process lifetime of purko. Idempotency claims are owned by a run, so a claim whose run
/// died can be told from one still running.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RunId(pub(crate) String);

impl RunId {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for RunId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Which process a run is: enough to tell, on the same host, whether it is still alive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProcessIdentity {
    pub pid: u32,
    /// The host name, as in `/proc/sys/kernel/hostname`.
    pub host: String,
    /// The process start time in clock ticks since boot (`/proc/<pid>/stat` field 22), so a
    /// reused pid is not mistaken for the run; `None` where `/proc` is not there.
    pub start_ticks: Option<u64>,
}

/// A request to run a `write` or `sends_out` call at most once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClaimRequest {
    pub key: String,
    pub agent: String,
    pub tool: String,
    pub arguments_digest: String,
    pub decision_id: DecisionId,
    pub run: RunId,
    /// Unix milliseconds.
    pub now_ms: i64,
    /// How long a record stands: from its creation while running, from its end once done.
    pub ttl_ms: i64,
}

/// What a claim found.
#[derive(Clone, Debug, PartialEq)]
pub enum Claim {
    /// The key is now held by the requesting run: execute, then `complete` or `release`.
    Claimed,
    /// The call already ran: here is its observation (the caller sets `replayed`).
    Replay(Observation),
    /// The call is running in a live run.
    InProgress { since_ms: i64 },
    /// The key was used for another call (other arguments, tool or agent).
    Mismatch { stored_digest: String },
    /// The call started in a run that died before it finished: whether it took effect is
    /// unknown until an operator clears the record.
    Unknown { since_ms: i64 },
}

/// Where an idempotency record stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RecordState {
    Running,
    Done,
    Unknown,
}

impl RecordState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Done => "done",
            Self::Unknown => "unknown",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "running" => Some(Self::Running),
            "done" => Some(Self::Done),
            "unknown" => Some(Self::Unknown),
            _ => None,
        }
    }
}

/// One idempotency key and what became of its call.
#[derive(Clone, Debug, PartialEq)]
pub struct IdempotencyRecord {
    pub key: String,
    pub agent: String,
    pub tool: String,
    pub arguments_digest: String,
    pub decision_id: DecisionId,
    pub state: RecordState,
    pub run: RunId,
    pub created_at_ms: i64,
    pub finished_at_ms: Option<i64>,
    pub observation: Option<Observation>,
}
