//! The one interface to Purko's state. Every write method returns only once its write is
//! durable in the backend's sense (committed), so a caller that got `Ok` may act on it; every
//! method that answers a race (`decide_approval`, `claim`) is atomic across processes.

use async_trait::async_trait;
use purko_protocol::{Approval, ApprovalId, DecisionId, Observation};

use crate::{
    Answer, ApprovalFilter, CallKey, Claim, ClaimRequest, Decided, DecisionFilter, DecisionRecord,
    Grant, IdempotencyRecord, Outcome, Result, RunId,
};

/// Decisions, approvals, grants and idempotency records.
#[async_trait]
pub trait Store: Send + Sync + std::fmt::Debug {
    /// Inserts a decision; its outcome may come now or later.
    async fn record_decision(&self, record: &DecisionRecord) -> Result<()>;

    /// Queues a decision nobody waits for (an allowed read's audit line, whose call changed
    /// nothing) and returns at once: it is encoded and committed with a later batch, within
    /// milliseconds, and before the store closes; a failure is logged. [`Store::decision`] and
    /// [`Store::decisions`] see it at once all the same.
    fn record_decision_later(&self, record: DecisionRecord);

    /// Sets (or replaces) the outcome of a recorded decision.
    async fn record_outcome(&self, id: &DecisionId, outcome: &Outcome) -> Result<()>;

    async fn decision(&self, id: &DecisionId) -> Result<Option<DecisionRecord>>;

    /// Newest first.
    async fn decisions(&self, filter: &DecisionFilter) -> Result<Vec<DecisionRecord>>;

    /// Stores an approval before anyone is asked.
    async fn create_approval(&self, approval: &Approval) -> Result<()>;

    async fn approval(&self, id: &ApprovalId) -> Result<Option<Approval>>;

    /// Newest first.
    async fn approvals(&self, filter: &ApprovalFilter) -> Result<Vec<Approval>>;

    /// The newest approval for this call, whatever its status.
    async fn latest_approval_for(&self, call: &CallKey) -> Result<Option<Approval>>;

    /// Answers an approval. Atomic: the first answer wins. A pending approval past its
    /// `expires_at_ms` becomes `Expired` (decided by `expiry`) and comes back as `Already`.
    /// Approving with `ApprovalScope::Session` also stores the session grant, in the same
    /// transaction.
    async fn decide_approval(
        &self,
        id: &ApprovalId,
        answer: &Answer,
        now_ms: i64,
    ) -> Result<Decided>;

    /// Marks every pending approval past its expiry `Expired`; returns them.
    async fn expire_approvals(&self, now_ms: i64) -> Result<Vec<Approval>>;

    /// Returns once the approval is no longer pending: answered in this process, by another
    /// process sharing the store, or expired (then it is marked `Expired` here).
    async fn wait_approval(&self, id: &ApprovalId) -> Result<Approval>;

    /// Stores a session grant; a second grant for the same call keeps the first.
    async fn add_grant(&self, grant: &Grant) -> Result<()>;

    async fn has_grant(
        &self,
        agent: &str,
        session: &str,
        tool: &str,
        arguments_digest: &str,
    ) -> Result<bool>;

    /// Registers this process as a run (pid, host, start time).
    async fn start_run(&self, now_ms: i64) -> Result<RunId>;

    /// Says the run is alive. A run without a heartbeat for 30 s counts as dead.
    async fn heartbeat(&self, run: &RunId, now_ms: i64) -> Result<()>;

    /// Claims an idempotency key (DESIGN.md section 6). Atomic across processes.
    async fn claim(&self, request: &ClaimRequest) -> Result<Claim>;

    /// Stores the observation of a claimed call; later claims replay it.
    async fn complete(
        &self,
        key: &str,
        run: &RunId,
        observation: &Observation,
        now_ms: i64,
    ) -> Result<()>;

    /// Forgets a claim whose call never reached the backend.
    async fn release(&self, key: &str, run: &RunId) -> Result<()>;

    async fn idempotency_record(&self, key: &str) -> Result<Option<IdempotencyRecord>>;

    /// An operator clears an `OUTCOME_UNKNOWN` record; `false` when the key was not unknown.
    async fn clear_unknown(&self, key: &str) -> Result<bool>;

    /// The HMAC secret for idempotency keys: generated once, then kept in the store.
    async fn idempotency_secret(&self) -> Result<[u8; 32]>;
}
