//! Runs, idempotency records and the idempotency secret. A claim reads and writes its record
//! inside the writer's `BEGIN IMMEDIATE` transaction, so of any number of identical claims, in
//! this process or another sharing the file, exactly one is `Claimed`.

use purko_protocol::{DecisionId, Observation};
use rusqlite::{Connection, OptionalExtension, Row, params};

use super::conn::Ctx;
use crate::liveness::{self, RunRow};
use crate::{
    Claim, ClaimRequest, Error, IdempotencyRecord, ProcessIdentity, RecordState, Result, RunId,
};

pub(crate) fn insert_run(
    conn: &Connection,
    ctx: &Ctx,
    run: &RunId,
    process: &ProcessIdentity,
    now_ms: i64,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO runs (id, pid, host, start_ticks, started_at_ms, heartbeat_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?5)",
    )
    .and_then(|mut s| {
        s.execute(params![
            run.as_str(),
            process.pid,
            process.host,
            process.start_ticks.and_then(|t| i64::try_from(t).ok()),
            now_ms,
        ])
    })
    .map_err(|e| ctx.err(e))?;
    Ok(())
}

pub(crate) fn heartbeat(conn: &Connection, ctx: &Ctx, run: &RunId, now_ms: i64) -> Result<()> {
    let changed = conn
        .prepare_cached("UPDATE runs SET heartbeat_ms = max(heartbeat_ms, ?2) WHERE id = ?1")
        .and_then(|mut s| s.execute(params![run.as_str(), now_ms]))
        .map_err(|e| ctx.err(e))?;
    if changed == 0 {
        return Err(ctx.not_found(format!("run {run}")));
    }
    Ok(())
}

fn run_row(conn: &Connection, ctx: &Ctx, run: &RunId) -> Result<Option<RunRow>> {
    conn.prepare_cached("SELECT pid, host, start_ticks, heartbeat_ms FROM runs WHERE id = ?1")
        .and_then(|mut s| {
            s.query_row([run.as_str()], |r| {
                Ok(RunRow {
                    process: ProcessIdentity {
                        pid: r.get(0)?,
                        host: r.get(1)?,
                        start_ticks: r
                            .get::<_, Option<i64>>(2)?
                            .and_then(|t| u64::try_from(t).ok()),
                    },
                    heartbeat_ms: r.get(3)?,
                })
            })
            .optional()
        })
        .map_err(|e| ctx.err(e))
}

/// Claims `request.key` for `request.run` (DESIGN.md section 6).
///
/// A done record stands for its TTL from its end; a running one for its TTL from its start, as
/// long as its run lives. A running record whose run died becomes unknown, and an unknown record
/// stands until an operator clears it: whether that call took effect cannot be told, so it is
/// never silently run again.
pub(crate) fn claim(conn: &Connection, ctx: &Ctx, request: &ClaimRequest) -> Result<Claim> {
    let Some(record) = get(conn, ctx, &request.key)? else {
        put_running(conn, ctx, request)?;
        return Ok(Claim::Claimed);
    };
    let now = request.now_ms;
    let age_from = |t: i64| now.saturating_sub(t) >= request.ttl_ms;
    let alive = record.state == RecordState::Running
        && run_row(conn, ctx, &record.run)?
            .is_some_and(|run| !liveness::is_dead(&run, &ctx.host, now));
    let expired = match record.state {
        RecordState::Done => age_from(record.finished_at_ms.unwrap_or(record.created_at_ms)),
        RecordState::Running => alive && age_from(record.created_at_ms),
        RecordState::Unknown => false,
    };
    if expired {
        put_running(conn, ctx, request)?;
        return Ok(Claim::Claimed);
    }
    if record.arguments_digest != request.arguments_digest
        || record.tool != request.tool
        || record.agent != request.agent
    {
        return Ok(Claim::Mismatch {
            stored_digest: record.arguments_digest,
        });
    }
    let since_ms = record.created_at_ms;
    Ok(match record.state {
        RecordState::Running if alive => Claim::InProgress { since_ms },
        RecordState::Running => {
            conn.prepare_cached(
                "UPDATE idempotency SET state = 'unknown' WHERE key = ?1 AND state = 'running'",
            )
            .and_then(|mut s| s.execute([&request.key]))
            .map_err(|e| ctx.err(e))?;
            tracing::warn!(key = %request.key, run = %record.run, "a claimed call's run died before it finished; its outcome is unknown");
            Claim::Unknown { since_ms }
        }
        RecordState::Unknown => Claim::Unknown { since_ms },
        RecordState::Done => match record.observation {
            Some(observation) => Claim::Replay(observation),
            None => {
                return Err(ctx.corrupt(
                    "idempotency record",
                    format!("{} is done without an observation", request.key),
                ));
            }
        },
    })
}

fn put_running(conn: &Connection, ctx: &Ctx, request: &ClaimRequest) -> Result<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO idempotency (key, agent, tool, arguments_digest, decision_id,
             state, run, created_at_ms, finished_at_ms, observation)
         VALUES (?1, ?2, ?3, ?4, ?5, 'running', ?6, ?7, NULL, NULL)",
    )
    .and_then(|mut s| {
        s.execute(params![
            request.key,
            request.agent,
            request.tool,
            request.arguments_digest,
            request.decision_id.as_str(),
            request.run.as_str(),
            request.now_ms,
        ])
    })
    .map_err(|e| ctx.err(e))?;
    Ok(())
}

pub(crate) fn complete(
    conn: &Connection,
    ctx: &Ctx,
    key: &str,
    run: &RunId,
    observation: &str,
    now_ms: i64,
) -> Result<()> {
    // An unknown record of this run is completed too: its run was only thought dead, and now
    // the outcome is known after all.
    let changed = conn
        .prepare_cached(
            "UPDATE idempotency SET state = 'done', observation = ?3, finished_at_ms = ?4
             WHERE key = ?1 AND run = ?2 AND state IN ('running', 'unknown')",
        )
        .and_then(|mut s| s.execute(params![key, run.as_str(), observation, now_ms]))
        .map_err(|e| ctx.err(e))?;
    if changed == 0 {
        return Err(Error::ClaimLost {
            path: ctx.path.clone(),
            key: key.to_owned(),
            run: run.to_string(),
        });
    }
    Ok(())
}

pub(crate) fn release(conn: &Connection, ctx: &Ctx, key: &str, run: &RunId) -> Result<()> {
    conn.prepare_cached(
        "DELETE FROM idempotency WHERE key = ?1 AND run = ?2 AND state = 'running'",
    )
    .and_then(|mut s| s.execute(params![key, run.as_str()]))
    .map_err(|e| ctx.err(e))?;
    Ok(())
}

pub(crate) fn clear_unknown(conn: &Connection, ctx: &Ctx, key: &str) -> Result<bool> {
    let changed = conn
        .prepare_cached("DELETE FROM idempotency WHERE key = ?1 AND state = 'unknown'")
        .and_then(|mut s| s.execute([key]))
        .map_err(|e| ctx.err(e))?;
    Ok(changed > 0)
}

pub(crate) fn get(conn: &Connection, ctx: &Ctx, key: &str) -> Result<Option<IdempotencyRecord>> {
    let raw = conn
        .prepare_cached(
            "SELECT key, agent, tool, arguments_digest, decision_id, state, run, created_at_ms,
                 finished_at_ms, observation
             FROM idempotency WHERE key = ?1",
        )
        .and_then(|mut s| s.query_row([key], RawRecord::read).optional())
        .map_err(|e| ctx.err(e))?;
    raw.map(|r| r.decode(ctx)).transpose()
}

struct RawRecord {
    key: String,
    agent: String,
    tool: String,
    arguments_digest: String,
    decision_id: String,
    state: String,
    run: String,
    created_at_ms: i64,
    finished_at_ms: Option<i64>,
    observation: Option<String>,
}

impl RawRecord {
    fn read(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            key: row.get(0)?,
            agent: row.get(1)?,
            tool: row.get(2)?,
            arguments_digest: row.get(3)?,
            decision_id: row.get(4)?,
            state: row.get(5)?,
            run: row.get(6)?,
            created_at_ms: row.get(7)?,
            finished_at_ms: row.get(8)?,
            observation: row.get(9)?,
        })
    }

    fn decode(self, ctx: &Ctx) -> Result<IdempotencyRecord> {
        let what = "idempotency record";
        let decision_id: DecisionId = self.decision_id.parse().map_err(|e| ctx.corrupt(what, e))?;
        let state = RecordState::parse(&self.state).ok_or_else(|| {
            ctx.corrupt(
                what,
                format!("{}: unknown state '{}'", self.key, self.state),
            )
        })?;
        let observation: Option<Observation> = self
            .observation
            .map(|o| serde_json::from_str(&o))
            .transpose()
            .map_err(|e| ctx.corrupt(what, format!("{}: {e}", self.key)))?;
        Ok(IdempotencyRecord {
            key: self.key,
            agent: self.agent,
            tool: self.tool,
            arguments_digest: self.arguments_digest,
            decision_id,
            state,
            run: RunId(self.run),
            created_at_ms: self.created_at_ms,
            finished_at_ms: self.finished_at_ms,
            observation,
        })
    }
}

const SECRET: &str = "idempotency_secret";

/// The secret, generated on first use. Generated inside the write transaction, so two processes
/// asking at once agree on one secret.
pub(crate) fn secret(conn: &Connection, ctx: &Ctx) -> Result<[u8; 32]> {
    let stored: Option<Vec<u8>> = conn
        .prepare_cached("SELECT value FROM meta WHERE name = ?1")
        .and_then(|mut s| s.query_row([SECRET], |r| r.get(0)).optional())
        .map_err(|e| ctx.err(e))?;
    if let Some(bytes) = stored {
        return <[u8; 32]>::try_from(bytes.as_slice()).map_err(|_| {
            ctx.corrupt(
                "idempotency secret",
                format!("it is {} bytes, not 32", bytes.len()),
            )
        });
    }
    let mut secret = [0_u8; 32];
    getrandom::fill(&mut secret).map_err(|e| Error::Random {
        path: ctx.path.clone(),
        message: e.to_string(),
    })?;
    conn.prepare_cached("INSERT INTO meta (name, value) VALUES (?1, ?2)")
        .and_then(|mut s| s.execute(params![SECRET, secret.as_slice()]))
        .map_err(|e| ctx.err(e))?;
    Ok(secret)
}
