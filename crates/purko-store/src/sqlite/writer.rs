//! The one thread that writes. Jobs queue up while a transaction commits; the next transaction
//! takes all of them at once (group commit), runs each in its own savepoint so one failing job
//! does not undo the others, commits once, and only then answers each waiter. An answer
//! therefore always describes committed state.

use std::sync::mpsc;
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

/// A queued write.
trait Job: Send {
    /// Runs inside the batch transaction; says whether it succeeded and how to answer later.
    fn run(self: Box<Self>, conn: &Connection, ctx: &Ctx) -> (bool, Reply);
    /// Answers with an error without running (the transaction could not start).
    fn fail(self: Box<Self>, error: &Error);
}

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

/// The queue to the writer thread. Dropping it lets the thread finish the queue and stop.
#[derive(Debug)]
pub(crate) struct Writer {
    jobs: Option<mpsc::Sender<Box<dyn Job>>>,
    thread: Option<JoinHandle<()>>,
    ctx: Ctx,
}

impl Writer {
    pub fn spawn(ctx: Ctx, conn: Connection) -> Result<Self> {
        let (tx, rx) = mpsc::channel::<Box<dyn Job>>();
        let thread_ctx = ctx.clone();
        let thread = std::thread::Builder::new()
            .name("purko-store-writer".into())
            .spawn(move || run(&thread_ctx, &conn, &rx))
            .map_err(|e| Error::Io {
                path: ctx.path.clone(),
                source: e.into(),
            })?;
        Ok(Self {
            jobs: Some(tx),
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
            .send(job)
            .map_err(|_| stopped())?;
        rx.await.map_err(|_| stopped())?
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

fn run(ctx: &Ctx, conn: &Connection, rx: &mpsc::Receiver<Box<dyn Job>>) {
    let mut batch = Vec::with_capacity(MAX_BATCH);
    while let Some(first) = next_job(rx) {
        batch.push(first);
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        commit_batch(ctx, conn, &mut batch);
    }
}

/// The next job: polled for a moment first, because a caller that just got its answer often
/// sends its next write within microseconds, and parking and waking this thread costs more.
fn next_job(rx: &mpsc::Receiver<Box<dyn Job>>) -> Option<Box<dyn Job>> {
    let spin_until = Instant::now() + SPIN;
    loop {
        match rx.try_recv() {
            Ok(job) => return Some(job),
            Err(mpsc::TryRecvError::Disconnected) => return None,
            Err(mpsc::TryRecvError::Empty) if Instant::now() < spin_until => {
                std::hint::spin_loop();
            }
            Err(mpsc::TryRecvError::Empty) => return rx.recv().ok(),
        }
    }
}

fn commit_batch(ctx: &Ctx, conn: &Connection, batch: &mut Vec<Box<dyn Job>>) {
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
