//! The embedded store: one `SQLite` file, `purko.db`, in WAL mode. Writes go through one writer
//! thread that commits them in groups; reads use a small pool of connections on tokio's
//! blocking threads. Several processes may share the file: the write lock and
//! `BEGIN IMMEDIATE` keep races decided in one place.

mod approvals;
mod checkpoint;
mod conn;
mod decisions;
mod idempotency;
mod writer;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use purko_protocol::{Approval, ApprovalId, ApprovalStatus, DecisionId, Observation};
use rusqlite::Connection;
use tokio::sync::{OnceCell, watch};

use checkpoint::Checkpointer;
use conn::Ctx;
pub use conn::SCHEMA_VERSION;
use decisions::{DecisionRow, OutcomeRow};
use writer::Writer;

use crate::{
    Answer, ApprovalFilter, CallKey, Claim, ClaimRequest, Decided, DecisionFilter, DecisionRecord,
    Error, Grant, IdempotencyRecord, Outcome, ProcessIdentity, Result, RunId, Store, liveness,
};

/// How often a waiter looks at the file for answers given by another process.
const POLL: Duration = Duration::from_millis(25);

/// How to open a store.
#[derive(Clone, Debug)]
pub struct OpenOptions {
    busy_timeout: Duration,
    readers: usize,
}

impl Default for OpenOptions {
    fn default() -> Self {
        Self {
            busy_timeout: Duration::from_secs(5),
            readers: 4,
        }
    }
}

impl OpenOptions {
    pub fn new() -> Self {
        Self::default()
    }

    /// How long to wait for another process's write lock before giving up with
    /// [`Error::Locked`]. Default 5 s.
    #[must_use]
    pub fn busy_timeout(mut self, timeout: Duration) -> Self {
        self.busy_timeout = timeout;
        self
    }

    /// How many idle read connections to keep. Default 4.
    #[must_use]
    pub fn readers(mut self, readers: usize) -> Self {
        self.readers = readers.max(1);
        self
    }

    /// Opens (creating if need be) `dir/purko.db`.
    pub fn open(&self, dir: &Path) -> Result<SqliteStore> {
        std::fs::create_dir_all(dir).map_err(|e| Error::Io {
            path: dir.to_path_buf(),
            source: Arc::new(e),
        })?;
        let ctx = Ctx {
            path: conn::db_path(dir),
            busy_timeout: self.busy_timeout,
            host: liveness::this_host(),
        };
        let writer_conn = conn::open_writer(&ctx)?;
        let first_reader = conn::open_reader(&ctx)?;
        let writer = Writer::spawn(ctx.clone(), writer_conn)?;
        let checkpointer = Checkpointer::spawn(&ctx)?;
        let (approvals_changed, _) = watch::channel(0);
        Ok(SqliteStore {
            inner: Arc::new(Inner {
                readers: Mutex::new(vec![first_reader]),
                max_readers: self.readers,
                approvals_changed,
                secret: OnceCell::new(),
                writer,
                _checkpointer: checkpointer,
                ctx,
            }),
        })
    }
}

/// Purko's state in `purko.db`. Cheap to clone; the last clone dropped finishes the queued
/// writes and closes the file.
#[derive(Clone)]
pub struct SqliteStore {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: Ctx,
    writer: Writer,
    _checkpointer: Checkpointer,
    readers: Mutex<Vec<Connection>>,
    max_readers: usize,
    /// Bumped whenever an approval stops being pending in this process, to wake its waiters.
    approvals_changed: watch::Sender<u64>,
    secret: OnceCell<[u8; 32]>,
}

impl std::fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.inner.ctx.path)
            .finish_non_exhaustive()
    }
}

impl SqliteStore {
    /// Opens (creating if need be) `dir/purko.db` with the default options.
    pub fn open(dir: &Path) -> Result<Self> {
        OpenOptions::default().open(dir)
    }

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.inner.ctx.path
    }

    /// Registers a run for a given process. [`Store::start_run`] registers this process; this
    /// is for tools that adopt another process's identity, and for tests.
    pub async fn start_run_as(&self, process: &ProcessIdentity, now_ms: i64) -> Result<RunId> {
        let run = RunId(format!("r_{}", ulid::Ulid::generate()));
        let (id, process) = (run.clone(), process.clone());
        self.write(move |c, ctx| idempotency::insert_run(c, ctx, &id, &process, now_ms))
            .await?;
        Ok(run)
    }

    async fn write<T, F>(&self, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Ctx) -> Result<T> + Send + 'static,
    {
        self.inner.writer.write(job).await
    }

    async fn read<T, F>(&self, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Ctx) -> Result<T> + Send + 'static,
    {
        let inner = Arc::clone(&self.inner);
        match tokio::task::spawn_blocking(move || inner.with_reader(job)).await {
            Ok(result) => result,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            Err(_) => Err(Error::WriterStopped {
                path: self.inner.ctx.path.clone(),
            }),
        }
    }

    fn approvals_changed(&self) {
        self.inner
            .approvals_changed
            .send_modify(|n| *n = n.wrapping_add(1));
    }
}

impl Inner {
    fn with_reader<T>(&self, job: impl FnOnce(&Connection, &Ctx) -> Result<T>) -> Result<T> {
        let idle = self
            .readers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        let conn = match idle {
            Some(conn) => conn,
            None => conn::open_reader(&self.ctx)?,
        };
        let result = job(&conn, &self.ctx);
        let mut idle = self.readers.lock().unwrap_or_else(PoisonError::into_inner);
        if idle.len() < self.max_readers {
            idle.push(conn);
        }
        result
    }
}

/// Unix milliseconds now.
fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[async_trait]
impl Store for SqliteStore {
    async fn record_decision(&self, record: &DecisionRecord) -> Result<()> {
        let row = DecisionRow::new(&self.inner.ctx, record)?;
        self.write(move |c, ctx| decisions::insert(c, ctx, &row))
            .await
    }

    fn record_decision_later(&self, record: DecisionRecord) {
        // Encoded on the writer's thread: off the path of the call's answer.
        self.inner.writer.write_later("a decision", move |c, ctx| {
            decisions::insert(c, ctx, &DecisionRow::new(ctx, &record)?)
        });
    }

    async fn record_outcome(&self, id: &DecisionId, outcome: &Outcome) -> Result<()> {
        let row = OutcomeRow::new(&self.inner.ctx, outcome)?;
        let id = id.clone();
        self.write(move |c, ctx| decisions::set_outcome(c, ctx, &id, &row))
            .await
    }

    async fn decision(&self, id: &DecisionId) -> Result<Option<DecisionRecord>> {
        let get = |id: DecisionId| self.read(move |c, ctx| decisions::get(c, ctx, &id));
        if let Some(found) = get(id.clone()).await? {
            return Ok(Some(found));
        }
        // A read's decision may still wait in the queue of what nobody awaits: an awaited write
        // commits that queue with it.
        self.write(|_, _| Ok(())).await?;
        get(id.clone()).await
    }

    async fn decisions(&self, filter: &DecisionFilter) -> Result<Vec<DecisionRecord>> {
        // What was queued without anyone waiting belongs in the list too.
        self.write(|_, _| Ok(())).await?;
        let filter = filter.clone();
        self.read(move |c, ctx| decisions::list(c, ctx, &filter))
            .await
    }

    async fn create_approval(&self, approval: &Approval) -> Result<()> {
        let payload = approvals::encode(&self.inner.ctx, approval)?;
        let approval = approval.clone();
        self.write(move |c, ctx| approvals::insert(c, ctx, &approval, &payload))
            .await
    }

    async fn approval(&self, id: &ApprovalId) -> Result<Option<Approval>> {
        let id = id.clone();
        self.read(move |c, ctx| approvals::get(c, ctx, &id)).await
    }

    async fn approvals(&self, filter: &ApprovalFilter) -> Result<Vec<Approval>> {
        let filter = filter.clone();
        self.read(move |c, ctx| approvals::list(c, ctx, &filter))
            .await
    }

    async fn latest_approval_for(&self, call: &CallKey) -> Result<Option<Approval>> {
        let call = call.clone();
        self.read(move |c, ctx| approvals::latest_for(c, ctx, &call))
            .await
    }

    async fn decide_approval(
        &self,
        id: &ApprovalId,
        answer: &Answer,
        now_ms: i64,
    ) -> Result<Decided> {
        let (id, answer) = (id.clone(), answer.clone());
        let decided = self
            .write(move |c, ctx| approvals::decide(c, ctx, &id, &answer, now_ms))
            .await?;
        if !matches!(decided, Decided::NotFound) {
            self.approvals_changed();
        }
        Ok(decided)
    }

    async fn expire_approvals(&self, now_ms: i64) -> Result<Vec<Approval>> {
        let expired = self
            .write(move |c, ctx| approvals::expire_due(c, ctx, now_ms))
            .await?;
        if !expired.is_empty() {
            self.approvals_changed();
        }
        Ok(expired)
    }

    async fn wait_approval(&self, id: &ApprovalId) -> Result<Approval> {
        let mut changed = self.inner.approvals_changed.subscribe();
        loop {
            // Mark the current generation seen before reading, so an answer given between the
            // read and the wait still wakes us.
            changed.borrow_and_update();
            let Some(approval) = self.approval(id).await? else {
                return Err(self.inner.ctx.not_found(format!("approval {id}")));
            };
            if approval.status != ApprovalStatus::Pending {
                return Ok(approval);
            }
            let now = now_ms();
            if now >= approval.expires_at_ms {
                let id = id.clone();
                let expired = self
                    .write(move |c, ctx| approvals::expire_one(c, ctx, &id, now))
                    .await?;
                self.approvals_changed();
                return expired.ok_or_else(|| {
                    self.inner
                        .ctx
                        .not_found(format!("approval {}", approval.id))
                });
            }
            let until_expiry = u64::try_from(approval.expires_at_ms - now).unwrap_or(0);
            let nap = POLL.min(Duration::from_millis(until_expiry));
            tokio::select! {
                _ = changed.changed() => {}
                () = tokio::time::sleep(nap) => {}
            }
        }
    }

    async fn add_grant(&self, grant: &Grant) -> Result<()> {
        let grant = grant.clone();
        self.write(move |c, ctx| approvals::add_grant(c, ctx, &grant))
            .await
    }

    async fn has_grant(
        &self,
        agent: &str,
        session: &str,
        tool: &str,
        arguments_digest: &str,
    ) -> Result<bool> {
        let key = [agent, session, tool, arguments_digest].map(str::to_owned);
        self.read(move |c, ctx| approvals::has_grant(c, ctx, key.each_ref().map(String::as_str)))
            .await
    }

    async fn start_run(&self, now_ms: i64) -> Result<RunId> {
        self.start_run_as(&liveness::this_process(), now_ms).await
    }

    async fn heartbeat(&self, run: &RunId, now_ms: i64) -> Result<()> {
        let run = run.clone();
        self.write(move |c, ctx| idempotency::heartbeat(c, ctx, &run, now_ms))
            .await
    }

    async fn claim(&self, request: &ClaimRequest) -> Result<Claim> {
        let request = request.clone();
        self.write(move |c, ctx| idempotency::claim(c, ctx, &request))
            .await
    }

    async fn complete(
        &self,
        key: &str,
        run: &RunId,
        observation: &Observation,
        now_ms: i64,
    ) -> Result<()> {
        let json = serde_json::to_string(observation)
            .map_err(|e| self.inner.ctx.encode("observation", &e))?;
        let (key, run) = (key.to_owned(), run.clone());
        self.write(move |c, ctx| idempotency::complete(c, ctx, &key, &run, &json, now_ms))
            .await
    }

    async fn release(&self, key: &str, run: &RunId) -> Result<()> {
        let (key, run) = (key.to_owned(), run.clone());
        self.write(move |c, ctx| idempotency::release(c, ctx, &key, &run))
            .await
    }

    async fn idempotency_record(&self, key: &str) -> Result<Option<IdempotencyRecord>> {
        let key = key.to_owned();
        self.read(move |c, ctx| idempotency::get(c, ctx, &key))
            .await
    }

    async fn clear_unknown(&self, key: &str) -> Result<bool> {
        let key = key.to_owned();
        self.write(move |c, ctx| idempotency::clear_unknown(c, ctx, &key))
            .await
    }

    async fn idempotency_secret(&self) -> Result<[u8; 32]> {
        self.inner
            .secret
            .get_or_try_init(|| self.write(idempotency::secret))
            .await
            .copied()
    }
}

/// Where [`SqliteStore::open`] keeps the database in `dir`.
pub fn database_path(dir: &Path) -> PathBuf {
    conn::db_path(dir)
}
