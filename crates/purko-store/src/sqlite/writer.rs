//! The one thread that writes. Jobs queue up while a transaction commits; the next transaction
//! takes all of them at once (group commit), runs each in its own savepoint so one failing job
//! does not undo the others, commits once, and only then answers each waiter. An answer
//! therefore always describes committed state.
//!
//! A job nobody waits for (an allowed read's audit line) goes to a queue of its own. It is
//! committed within [`LATER_WINDOW`]: with an awaited job that comes meanwhile, or when the
//! window ends. After each commit the thread stays awake for one more window; only a job
//! queued while it sleeps wakes it. A busy gateway thus commits its reads' lines in a few large
//! transactions rather than many small ones (each writes whole pages to the WAL), and calls
//! that come one after another never pay for waking this thread: it wakes itself.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use tokio::sync::oneshot;

use super::conn::Ctx;
use crate::{Error, Result};

/// The most jobs one transaction takes, so one commit never grows without bound.
const MAX_BATCH: usize = 512;

/// How long the writer polls for more work before it parks.
const SPIN: Duration = Duration::from_micros(50);

/// How long a batch of jobs nobody waits for may wait for more before it commits.
pub(crate) const LATER_WINDOW: Duration = Duration::from_millis(5);

/// A queued write.
trait Job: Send {
    /// Runs inside the batch transaction; says whether it succeeded and how to answer later.
    fn run(self: Box<Self>, conn: &Connection, ctx: &Ctx) -> (bool, Reply);
    /// Answers with an error without running (the transaction could not start).
    fn fail(self: Box<Self>, error: &Error);
}

/// What wakes the writer thread.
enum Wake {
    /// A job someone awaits: its batch commits now.
    Job(Box<dyn Job>),
    /// A job nobody awaits was queued while the thread slept.
    Later,
}

/// Jobs nobody awaits, in the order they came, and whether the thread sleeps until woken.
#[derive(Default)]
struct LaterJobs {
    jobs: Vec<Box<dyn Job>>,
    asleep: bool,
}

type LaterQueue = Arc<Mutex<LaterJobs>>;

/// Answers a waiter with the job's result, or with the error that stopped the commit.
type Reply = Box<dyn FnOnce(Option<&Error>) + Send>;

struct Pending<T, F> {
    job: F,
    tx: oneshot::Sender<Result<T>>,
}

impl<T, F> Job for Pending<T, F>
where
    T: Send + 'static,
    F: FnOnce(&Connection, &Ctx) -> Result<T> + Send,
{
    fn run(self: Box<Self>, conn: &Connection, ctx: &Ctx) -> (bool, Reply) {
        let Self { job, tx } = *self;
        let result = job(conn, ctx);
        let ok = result.is_ok();
        let reply: Reply = Box::new(move |commit_failure| {
            let answer = match commit_failure {
                Some(e) => Err(e.clone()),
                None => result,
            };
            // The waiter may have gone away (its task was cancelled); the write stands.
            let _ = tx.send(answer);
        });
        (ok, reply)
    }

    fn fail(self: Box<Self>, error: &Error) {
        let _ = self.tx.send(Err(error.clone()));
    }
}

/// A write nobody waits for: its failure is logged.
struct Later<F> {
    job: F,
    what: &'static str,
}

impl<F> Job for Later<F>
where
    F: FnOnce(&Connection, &Ctx) -> Result<()> + Send,
{
    fn run(self: Box<Self>, conn: &Connection, ctx: &Ctx) -> (bool, Reply) {
        let Self { job, what } = *self;
        let result = job(conn, ctx);
        let ok = result.is_ok();
        let reply: Reply = Box::new(move |commit_failure| {
            if let Some(e) = commit_failure.or(result.as_ref().err()) {
                tracing::error!(error = %e, "cannot store {what}");
            }
        });
        (ok, reply)
    }

    fn fail(self: Box<Self>, error: &Error) {
        tracing::error!(error = %error, "cannot store {}", self.what);
    }
}

/// The queue to the writer thread. Dropping it lets the thread finish the queue and stop.
pub(crate) struct Writer {
    jobs: Option<mpsc::Sender<Wake>>,
    later: LaterQueue,
    thread: Option<JoinHandle<()>>,
    ctx: Ctx,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("path", &self.ctx.path)
            .finish_non_exhaustive()
    }
}

impl Writer {
    pub fn spawn(ctx: Ctx, conn: Connection) -> Result<Self> {
        let (tx, rx) = mpsc::channel::<Wake>();
        let later = LaterQueue::default();
        let thread_ctx = ctx.clone();
        let thread_later = Arc::clone(&later);
        let thread = std::thread::Builder::new()
            .name("purko-store-writer".into())
            .spawn(move || run(&thread_ctx, &conn, &rx, &thread_later))
            .map_err(|e| Error::Io {
                path: ctx.path.clone(),
                source: e.into(),
            })?;
        Ok(Self {
            jobs: Some(tx),
            later,
            thread: Some(thread),
            ctx,
        })
    }

    /// Runs `job` in the next batch and returns its result once the batch has committed.
    pub async fn write<T, F>(&self, job: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection, &Ctx) -> Result<T> + Send + 'static,
    {
        let (tx, rx) = oneshot::channel::<Result<T>>();
        let job: Box<dyn Job> = Box::new(Pending { job, tx });
        let stopped = || Error::WriterStopped {
            path: self.ctx.path.clone(),
        };
        self.jobs
            .as_ref()
            .ok_or_else(stopped)?
            .send(Wake::Job(job))
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
    }
}

impl Writer {
    /// Queues `job` for a batch that commits within [`LATER_WINDOW`] and returns at once; a
    /// failure is logged as "cannot store `what`".
    pub fn write_later<F>(&self, what: &'static str, job: F)
    where
        F: FnOnce(&Connection, &Ctx) -> Result<()> + Send + 'static,
    {
        let Some(jobs) = self.jobs.as_ref() else {
            tracing::error!(path = %self.ctx.path.display(), "cannot store {what}: the store is closed");
            return;
        };
        let wake = {
            let mut later = lock(&self.later);
            later.jobs.push(Box::new(Later { job, what }));
            std::mem::take(&mut later.asleep)
        };
        if wake && jobs.send(Wake::Later).is_err() {
            tracing::error!(path = %self.ctx.path.display(), "cannot store {what}: the store is closed");
        }
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        self.jobs.take();
        if let Some(thread) = self.thread.take() {
            // Finish what is queued so every acknowledged write is on disk when this returns.
            let _ = thread.join();
        }
    }
}

fn run(ctx: &Ctx, conn: &Connection, rx: &mpsc::Receiver<Wake>, later: &Mutex<LaterJobs>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    // Whether the last window saw a commit: the thread then stays awake for another.
    let mut awake = false;
    loop {
        let first = if awake {
            match next_wake_within(rx, LATER_WINDOW) {
                Next::Wake(wake) => Some(wake),
                Next::Closed => break,
                Next::Nothing => None,
            }
        } else {
            match next_wake(rx, later) {
                Some(wake) => Some(wake),
                None => break,
            }
        };
        if let Some(first) = first {
            let mut awaited = take(first, &mut batch);
            drain(rx, &mut batch, &mut awaited);
            if !awaited {
                // Woken for a job nobody awaits: give it company for a moment, unless an
                // awaited job comes meanwhile.
                if let Ok(wake) = rx.recv_timeout(LATER_WINDOW) {
                    awaited = take(wake, &mut batch);
                    drain(rx, &mut batch, &mut awaited);
                }
            }
        }
        batch.append(&mut lock(later).jobs);
        awake = !batch.is_empty();
        commit_batch(ctx, conn, &mut batch);
    }
    // The queue is closed: what nobody awaited is still committed before the store closes.
    batch.append(&mut lock(later).jobs);
    commit_batch(ctx, conn, &mut batch);
}

/// Puts an awaited job in the batch; says whether it was one.
fn take(wake: Wake, batch: &mut Vec<Box<dyn Job>>) -> bool {
    match wake {
        Wake::Job(job) => {
            batch.push(job);
            true
        }
        Wake::Later => false,
    }
}

/// Takes whatever else is queued, up to a full batch.
fn drain(rx: &mpsc::Receiver<Wake>, batch: &mut Vec<Box<dyn Job>>, awaited: &mut bool) {
    while batch.len() < MAX_BATCH {
        match rx.try_recv() {
            Ok(wake) => *awaited |= take(wake, batch),
            Err(_) => break,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The next wake of a thread that has nothing to do: polled for a moment first, because a
/// caller that just got its answer often sends its next write within microseconds, and parking
/// and waking this thread costs more. A job nobody awaits that is already queued counts as a
/// wake; otherwise the thread sleeps until a job comes (`None`: the queue is closed).
fn next_wake(rx: &mpsc::Receiver<Wake>, later: &Mutex<LaterJobs>) -> Option<Wake> {
    match spin(rx) {
        Some(Next::Wake(wake)) => return Some(wake),
        Some(_) => return None,
        None => {}
    }
    {
        let mut later = lock(later);
        if !later.jobs.is_empty() {
            return Some(Wake::Later);
        }
        // From here on a queued job wakes the thread.
        later.asleep = true;
    }
    let wake = rx.recv().ok();
    lock(later).asleep = false;
    wake
}

/// What a thread that stays awake for a window saw.
enum Next {
    Wake(Wake),
    /// The window ended without a wake.
    Nothing,
    Closed,
}

/// The next wake within `window`, polled for a moment first as in [`next_wake`].
fn next_wake_within(rx: &mpsc::Receiver<Wake>, window: Duration) -> Next {
    let start = Instant::now();
    if let Some(next) = spin(rx) {
        return next;
    }
    match rx.recv_timeout(window.saturating_sub(start.elapsed())) {
        Ok(wake) => Next::Wake(wake),
        Err(mpsc::RecvTimeoutError::Timeout) => Next::Nothing,
        Err(mpsc::RecvTimeoutError::Disconnected) => Next::Closed,
    }
}

/// Polls the queue for [`SPIN`]: a wake or the queue's end, or `None` when nothing came.
fn spin(rx: &mpsc::Receiver<Wake>) -> Option<Next> {
    let until = Instant::now() + SPIN;
    loop {
        match rx.try_recv() {
            Ok(wake) => return Some(Next::Wake(wake)),
            Err(mpsc::TryRecvError::Disconnected) => return Some(Next::Closed),
            Err(mpsc::TryRecvError::Empty) if Instant::now() < until => std::hint::spin_loop(),
            Err(mpsc::TryRecvError::Empty) => return None,
        }
    }
}

fn commit_batch(ctx: &Ctx, conn: &Connection, batch: &mut Vec<Box<dyn Job>>) {
    if batch.is_empty() {
        return;
    }
    if let Err(e) = exec(conn, "BEGIN IMMEDIATE") {
        let e = ctx.err(e);
        tracing::error!(path = %ctx.path.display(), error = %e, "a store transaction could not start");
        for job in batch.drain(..) {
            job.fail(&e);
        }
        return;
    }
    let mut replies: Vec<Reply> = Vec::with_capacity(batch.len());
    let mut broken: Option<Error> = None;
    for job in batch.drain(..) {
        if let Some(e) = &broken {
            job.fail(e);
            continue;
        }
        if let Err(e) = exec(conn, "SAVEPOINT job") {
            let e = ctx.err(e);
            job.fail(&e);
            broken = Some(e);
            continue;
        }
        let (ok, reply) = job.run(conn, ctx);
        let end = if ok {
            exec(conn, "RELEASE job")
        } else {
            exec(conn, "ROLLBACK TO job").and_then(|()| exec(conn, "RELEASE job"))
        };
        if let Err(e) = end {
            broken = Some(ctx.err(e));
        }
        replies.push(reply);
    }
    let failure = match broken {
        Some(e) => {
            let _ = exec(conn, "ROLLBACK");
            Some(e)
        }
        None => exec(conn, "COMMIT").err().map(|e| {
            let _ = exec(conn, "ROLLBACK");
            ctx.err(e)
        }),
    };
    if let Some(e) = &failure {
        tracing::error!(path = %ctx.path.display(), error = %e, "a store transaction failed");
    }
    for reply in replies {
        reply(failure.as_ref());
    }
}

fn exec(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}
