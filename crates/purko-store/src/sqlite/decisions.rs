//! The decision log. A decision's evaluation is kept whole, as JSON, so explaining it later is a
//! read; the columns beside it exist only for the filters. Rows are ordered by the ULID inside
//! the decision id, which is time order whatever the id's digest prefix.

use purko_protocol::{DecisionId, Evaluation, Observation};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, Row, params, params_from_iter};

use super::conn::Ctx;
use crate::{DecisionFilter, DecisionRecord, Outcome, Result};

/// A decision, encoded for its row.
#[derive(Debug)]
pub(crate) struct DecisionRow {
    ulid: String,
    id: String,
    agent: String,
    session: String,
    step: String,
    tool: String,
    effect: &'static str,
    created_at_ms: i64,
    evaluation: String,
    outcome: Option<OutcomeRow>,
}

/// An outcome, encoded for its columns.
#[derive(Debug)]
pub(crate) struct OutcomeRow {
    observation: String,
    finished_at_ms: i64,
    duration_us: i64,
    approval_id: Option<String>,
}

impl DecisionRow {
    pub fn new(ctx: &Ctx, record: &DecisionRecord) -> Result<Self> {
        let evaluation = &record.evaluation;
        Ok(Self {
            ulid: evaluation.decision_id.ulid().to_owned(),
            id: evaluation.decision_id.as_str().to_owned(),
            agent: record.agent.clone(),
            session: record.session.clone(),
            step: record.step.clone(),
            tool: evaluation.tool.clone(),
            effect: evaluation.effect.as_str(),
            created_at_ms: record.created_at_ms,
            evaluation: serde_json::to_string(evaluation)
                .map_err(|e| ctx.encode("evaluation", &e))?,
            outcome: record
                .outcome
                .as_ref()
                .map(|o| OutcomeRow::new(ctx, o))
                .transpose()?,
        })
    }
}

impl OutcomeRow {
    pub fn new(ctx: &Ctx, outcome: &Outcome) -> Result<Self> {
        Ok(Self {
            observation: serde_json::to_string(&outcome.observation)
                .map_err(|e| ctx.encode("observation", &e))?,
            finished_at_ms: outcome.finished_at_ms,
            duration_us: i64::try_from(outcome.duration_us).unwrap_or(i64::MAX),
            approval_id: outcome.approval_id.as_ref().map(ToString::to_string),
        })
    }
}

pub(crate) fn insert(conn: &Connection, ctx: &Ctx, row: &DecisionRow) -> Result<()> {
    let outcome = row.outcome.as_ref();
    conn.prepare_cached(
        "INSERT INTO decisions (ulid, id, agent, session, step, tool, effect, created_at_ms,
             evaluation, observation, finished_at_ms, duration_us, approval_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )
    .and_then(|mut s| {
        s.execute(params![
            row.ulid,
            row.id,
            row.agent,
            row.session,
            row.step,
            row.tool,
            row.effect,
            row.created_at_ms,
            row.evaluation,
            outcome.map(|o| &o.observation),
            outcome.map(|o| o.finished_at_ms),
            outcome.map(|o| o.duration_us),
            outcome.and_then(|o| o.approval_id.as_ref()),
        ])
    })
    .map_err(|e| ctx.err(e))?;
    Ok(())
}

pub(crate) fn set_outcome(
    conn: &Connection,
    ctx: &Ctx,
    id: &DecisionId,
    outcome: &OutcomeRow,
) -> Result<()> {
    let changed = conn
        .prepare_cached(
            "UPDATE decisions SET observation = ?3, finished_at_ms = ?4, duration_us = ?5,
                 approval_id = ?6
             WHERE ulid = ?1 AND id = ?2",
        )
        .and_then(|mut s| {
            s.execute(params![
                id.ulid(),
                id.as_str(),
                outcome.observation,
                outcome.finished_at_ms,
                outcome.duration_us,
                outcome.approval_id,
            ])
        })
        .map_err(|e| ctx.err(e))?;
    if changed == 0 {
        return Err(ctx.not_found(format!("decision {id}")));
    }
    Ok(())
}

const COLUMNS: &str = "id, agent, session, step, created_at_ms, evaluation, observation, \
                       finished_at_ms, duration_us, approval_id";

pub(crate) fn get(conn: &Connection, ctx: &Ctx, id: &DecisionId) -> Result<Option<DecisionRecord>> {
    let raw = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM decisions WHERE ulid = ?1 AND id = ?2"
        ))
        .and_then(|mut s| {
            s.query_row(params![id.ulid(), id.as_str()], RawDecision::read)
                .optional()
        })
        .map_err(|e| ctx.err(e))?;
    raw.map(|r| r.decode(ctx)).transpose()
}

pub(crate) fn list(
    conn: &Connection,
    ctx: &Ctx,
    filter: &DecisionFilter,
) -> Result<Vec<DecisionRecord>> {
    let mut clauses = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    let mut add = |clause: &str, value: String| {
        values.push(Value::Text(value));
        clauses.push(format!("{clause} ?{}", values.len()));
    };
    if let Some(agent) = &filter.agent {
        add("agent =", agent.clone());
    }
    if let Some(tool) = &filter.tool {
        add("tool =", tool.clone());
    }
    if let Some(session) = &filter.session {
        add("session =", session.clone());
    }
    if let Some(effect) = filter.effect {
        add("effect =", effect.as_str().to_owned());
    }
    if let Some(before) = &filter.before {
        add("ulid <", before.ulid().to_owned());
    }
    let condition = if clauses.is_empty() {
        String::new()
    } else {
        format!("WHERE {}", clauses.join(" AND "))
    };
    values.push(Value::Integer(
        i64::try_from(filter.limit).unwrap_or(i64::MAX),
    ));
    let sql = format!(
        "SELECT {COLUMNS} FROM decisions {condition} ORDER BY ulid DESC LIMIT ?{}",
        values.len()
    );
    let raws = conn
        .prepare_cached(&sql)
        .and_then(|mut s| {
            s.query_map(params_from_iter(values), RawDecision::read)?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|e| ctx.err(e))?;
    raws.into_iter().map(|r| r.decode(ctx)).collect()
}

/// A row as `SQLite` hands it over, before its JSON is parsed.
struct RawDecision {
    id: String,
    agent: String,
    session: String,
    step: String,
    created_at_ms: i64,
    evaluation: String,
    observation: Option<String>,
    finished_at_ms: Option<i64>,
    duration_us: Option<i64>,
    approval_id: Option<String>,
}

impl RawDecision {
    fn read(row: &Row<'_>) -> rusqlite::Result<Self> {
        Ok(Self {
            id: row.get(0)?,
            agent: row.get(1)?,
            session: row.get(2)?,
            step: row.get(3)?,
            created_at_ms: row.get(4)?,
            evaluation: row.get(5)?,
            observation: row.get(6)?,
            finished_at_ms: row.get(7)?,
            duration_us: row.get(8)?,
            approval_id: row.get(9)?,
        })
    }

    fn decode(self, ctx: &Ctx) -> Result<DecisionRecord> {
        let evaluation: Evaluation = serde_json::from_str(&self.evaluation)
            .map_err(|e| ctx.corrupt("decision evaluation", format!("{}: {e}", self.id)))?;
        let outcome = match self.observation {
            None => None,
            Some(json) => {
                let observation: Observation = serde_json::from_str(&json)
                    .map_err(|e| ctx.corrupt("decision outcome", format!("{}: {e}", self.id)))?;
                let approval_id = self
                    .approval_id
                    .map(|a| a.parse())
                    .transpose()
                    .map_err(|e| ctx.corrupt("decision outcome", e))?;
                Some(Outcome {
                    observation,
                    finished_at_ms: self.finished_at_ms.unwrap_or(self.created_at_ms),
                    duration_us: self
                        .duration_us
                        .and_then(|d| u64::try_from(d).ok())
                        .unwrap_or(0),
                    approval_id,
                })
            }
        };
        Ok(DecisionRecord {
            evaluation,
            agent: self.agent,
            session: self.session,
            step: self.step,
            created_at_ms: self.created_at_ms,
            outcome,
        })
    }
}
