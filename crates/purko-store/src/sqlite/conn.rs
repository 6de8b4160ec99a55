//! Opening `purko.db`: refuse what is not a Purko store before writing a byte to it, then set
//! the connection up (WAL, `synchronous=NORMAL`, foreign keys, busy timeout) and bring the
//! schema to the newest version under the write lock, one migration step at a time.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OpenFlags};

use crate::{Error, Result};

/// `PRAGMA application_id` of a Purko store: "PRKO".
const APPLICATION_ID: i64 = 0x5052_4B4F;

/// The schema, one step per version: step `i` takes `user_version` from `i` to `i + 1`.
/// Never edit a released step; append a new one.
const MIGRATIONS: &[&str] = &[
    // 1: decisions, approvals, grants, runs, idempotency records, the secret.
    r"
    CREATE TABLE decisions (
        ulid           TEXT NOT NULL UNIQUE,
        id             TEXT NOT NULL,
        agent          TEXT NOT NULL,
        session        TEXT NOT NULL,
        step           TEXT NOT NULL,
        tool           TEXT NOT NULL,
        effect         TEXT NOT NULL,
        created_at_ms  INTEGER NOT NULL,
        evaluation     TEXT NOT NULL,
        observation    TEXT,
        finished_at_ms INTEGER,
        duration_us    INTEGER,
        approval_id    TEXT
    );
    CREATE INDEX decisions_agent ON decisions (agent, ulid);
    CREATE INDEX decisions_tool ON decisions (tool, ulid);
    CREATE INDEX decisions_session ON decisions (session, ulid);

    CREATE TABLE approvals (
        id               TEXT PRIMARY KEY NOT NULL,
        decision_id      TEXT NOT NULL,
        agent            TEXT NOT NULL,
        session          TEXT NOT NULL,
        step             TEXT NOT NULL,
        tool             TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        status           TEXT NOT NULL,
        created_at_ms    INTEGER NOT NULL,
        expires_at_ms    INTEGER NOT NULL,
        payload          TEXT NOT NULL
    );
    CREATE INDEX approvals_status ON approvals (status, expires_at_ms);
    CREATE INDEX approvals_created ON approvals (created_at_ms, id);
    CREATE INDEX approvals_agent ON approvals (agent, created_at_ms, id);
    CREATE INDEX approvals_call ON approvals (agent, session, step, tool, arguments_digest, created_at_ms, id);

    CREATE TABLE grants (
        agent            TEXT NOT NULL,
        session          TEXT NOT NULL,
        tool             TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        approval_id      TEXT NOT NULL,
        created_at_ms    INTEGER NOT NULL,
        PRIMARY KEY (agent, session, tool, arguments_digest)
    ) WITHOUT ROWID;

    CREATE TABLE runs (
        id            TEXT PRIMARY KEY NOT NULL,
        pid           INTEGER NOT NULL,
        host          TEXT NOT NULL,
        start_ticks   INTEGER,
        started_at_ms INTEGER NOT NULL,
        heartbeat_ms  INTEGER NOT NULL
    );

    CREATE TABLE idempotency (
        key              TEXT PRIMARY KEY NOT NULL,
        agent            TEXT NOT NULL,
        tool             TEXT NOT NULL,
        arguments_digest TEXT NOT NULL,
        decision_id      TEXT NOT NULL,
        state            TEXT NOT NULL,
        run              TEXT NOT NULL REFERENCES runs (id),
        created_at_ms    INTEGER NOT NULL,
        finished_at_ms   INTEGER,
        observation      TEXT
    );
    CREATE INDEX idempotency_state ON idempotency (state);

    CREATE TABLE meta (
        name  TEXT PRIMARY KEY NOT NULL,
        value BLOB NOT NULL
    );
    ",
];

/// The schema version this build writes.
#[expect(
    clippy::cast_possible_wrap,
    reason = "a handful of migration steps, far below i64::MAX"
)]
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The file a store lives in, and how to turn `SQLite`'s errors into ours.
#[derive(Clone, Debug)]
pub(crate) struct Ctx {
    pub path: PathBuf,
    pub busy_timeout: Duration,
    /// This host's name, to judge whether a run on the same host is alive.
    pub host: String,
}

impl Ctx {
    pub fn err(&self, e: rusqlite::Error) -> Error {
        match e.sqlite_error_code() {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => Error::Locked {
                path: self.path.clone(),
                waited_ms: u64::try_from(self.busy_timeout.as_millis()).unwrap_or(u64::MAX),
            },
            Some(ErrorCode::NotADatabase) => Error::NotAStore {
                path: self.path.clone(),
                why: "file is not a database".into(),
            },
            _ => Error::Sqlite {
                path: self.path.clone(),
                source: Arc::new(e),
            },
        }
    }

    pub fn corrupt(&self, what: &'static str, message: impl std::fmt::Display) -> Error {
        Error::Corrupt {
            path: self.path.clone(),
            what,
            message: message.to_string(),
        }
    }

    pub fn encode(&self, what: &'static str, e: &serde_json::Error) -> Error {
        Error::Encode {
            path: self.path.clone(),
            what,
            message: e.to_string(),
        }
    }

    pub fn not_found(&self, what: String) -> Error {
        Error::NotFound {
            path: self.path.clone(),
            what,
        }
    }
}

/// Opens the file for the writer: checks it, sets it up and migrates it.
pub(crate) fn open_writer(ctx: &Ctx) -> Result<Connection> {
    let conn = connect(
        ctx,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_CREATE,
    )?;
    let (application_id, version, tables) = probe(ctx, &conn)?;
    if application_id != 0 && application_id != APPLICATION_ID {
        return Err(Error::NotAStore {
            path: ctx.path.clone(),
            why: format!("its application id is {application_id:#x}, another program's"),
        });
    }
    if version > SCHEMA_VERSION {
        return Err(newer(ctx, version));
    }
    if application_id == 0 && version == 0 && tables > 0 {
        return Err(Error::NotAStore {
            path: ctx.path.clone(),
            why: "it is another program's SQLite database".into(),
        });
    }
    let mode: String = conn
        .query_row("PRAGMA journal_mode = WAL", [], |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    if !mode.eq_ignore_ascii_case("wal") {
        tracing::warn!(path = %ctx.path.display(), mode, "the store could not switch to WAL");
    }
    conn.execute_batch(
        "PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;
         PRAGMA wal_autocheckpoint = 10000; PRAGMA journal_size_limit = 67108864;
         PRAGMA cache_size = -1024;",
    )
    .map_err(|e| ctx.err(e))?;
    migrate(ctx, &conn)?;
    Ok(conn)
}

/// Opens a connection for reads only.
pub(crate) fn open_reader(ctx: &Ctx) -> Result<Connection> {
    let conn = connect(ctx, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    conn.execute_batch("PRAGMA query_only = ON; PRAGMA cache_size = -512;")
        .map_err(|e| ctx.err(e))?;
    Ok(conn)
}

/// Opens the connection that copies the WAL back into the database.
pub(crate) fn open_checkpointer(ctx: &Ctx) -> Result<Connection> {
    connect(ctx, OpenFlags::SQLITE_OPEN_READ_WRITE)
}

fn connect(ctx: &Ctx, flags: OpenFlags) -> Result<Connection> {
    let conn = Connection::open_with_flags(&ctx.path, flags | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| ctx.err(e))?;
    conn.busy_timeout(ctx.busy_timeout)
        .map_err(|e| ctx.err(e))?;
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

/// Reads the header without writing: a file that is not a database fails here, untouched.
fn probe(ctx: &Ctx, conn: &Connection) -> Result<(i64, i64, i64)> {
    let application_id = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    let version = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    let tables = conn
        .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
        .map_err(|e| ctx.err(e))?;
    Ok((application_id, version, tables))
}

fn newer(ctx: &Ctx, found: i64) -> Error {
    Error::NewerSchema {
        path: ctx.path.clone(),
        found,
        supported: SCHEMA_VERSION,
    }
}

/// Applies the missing steps in one `BEGIN IMMEDIATE` transaction, so two processes opening a
/// new store at once never both migrate it, and a failed step leaves the file as it was.
fn migrate(ctx: &Ctx, conn: &Connection) -> Result<()> {
    conn.execute_batch("BEGIN IMMEDIATE")
        .map_err(|e| ctx.err(e))?;
    let result = (|| {
        let version: i64 = conn
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| ctx.err(e))?;
        if version > SCHEMA_VERSION {
            return Err(newer(ctx, version));
        }
        let from = usize::try_from(version).unwrap_or(0);
        for (i, step) in MIGRATIONS.iter().enumerate().skip(from) {
            conn.execute_batch(step).map_err(|e| ctx.err(e))?;
            tracing::info!(path = %ctx.path.display(), version = i + 1, "migrated the store");
        }
        if from < MIGRATIONS.len() {
            conn.execute_batch(&format!(
                "PRAGMA application_id = {APPLICATION_ID}; PRAGMA user_version = {SCHEMA_VERSION};"
            ))
            .map_err(|e| ctx.err(e))?;
        }
        Ok(())
    })();
    let end = if result.is_ok() { "COMMIT" } else { "ROLLBACK" };
    let ended = conn.execute_batch(end).map_err(|e| ctx.err(e));
    result.and(ended)
}

/// The file of the store in `dir`.
pub(crate) fn db_path(dir: &Path) -> PathBuf {
    dir.join("purko.db")
}
