//! WAL checkpoints off the write path. Copying the WAL back into the database is the one step
//! that waits for the disk (`synchronous=NORMAL` syncs only there), so a thread of its own does
//! it a few times a second with a `PASSIVE` checkpoint, which never blocks the writer or the
//! readers. The writer keeps a high `wal_autocheckpoint` only as a bound on the WAL's growth.

use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::Connection;

use super::conn::{self, Ctx};
use crate::{Error, Result};

/// How often the WAL is copied back.
const INTERVAL: Duration = Duration::from_millis(200);

#[derive(Debug)]
pub(crate) struct Checkpointer {
    stop: Option<mpsc::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl Checkpointer {
    pub fn spawn(ctx: &Ctx) -> Result<Self> {
        let conn = conn::open_checkpointer(ctx)?;
        let (stop, stopped) = mpsc::channel::<()>();
        let thread_ctx = ctx.clone();
        let thread = std::thread::Builder::new()
            .name("purko-store-checkpoint".into())
            .spawn(move || run(&thread_ctx, &conn, &stopped))
            .map_err(|e| Error::Io {
                path: ctx.path.clone(),
                source: e.into(),
            })?;
        Ok(Self {
            stop: Some(stop),
            thread: Some(thread),
        })
    }
}

impl Drop for Checkpointer {
    fn drop(&mut self) {
        self.stop.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn run(ctx: &Ctx, conn: &Connection, stopped: &mpsc::Receiver<()>) {
    while let Err(RecvTimeoutError::Timeout) = stopped.recv_timeout(INTERVAL) {
        let result = conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
            Ok((r.get::<_, i64>(1)?, r.get::<_, i64>(2)?))
        });
        match result {
            Ok((log, copied)) => tracing::trace!(log, copied, "checkpointed the store"),
            Err(e) => {
                tracing::debug!(path = %ctx.path.display(), error = %e, "a checkpoint did not run");
            }
        }
    }
}
