//! Approvals and session grants. An approval is kept whole as JSON (`payload`); `status` and the
//! call's columns beside it serve the filters. Deciding reads and rewrites one row inside the
//! writer's `BEGIN IMMEDIATE` transaction, which is what makes the first answer win across
//! processes.

use purko_protocol::{Approval, ApprovalId, ApprovalScope, ApprovalStatus};
use rusqlite::types::Value;
use rusqlite::{Connection, OptionalExtension, params, params_from_iter};

use super::conn::Ctx;
use crate::{Answer, ApprovalFilter, CallKey, Decided, Grant, Result};

/// Who `decided_by` names when nobody answered in time.
pub(crate) const EXPIRY: &str = "expiry";

pub(crate) fn encode(ctx: &Ctx, approval: &Approval) -> Result<String> {
    serde_json::to_string(approval).map_err(|e| ctx.encode("approval", &e))
}

fn decode(ctx: &Ctx, payload: &str) -> Result<Approval> {
    serde_json::from_str(payload).map_err(|e| ctx.corrupt("approval", e))
}

pub(crate) fn insert(
    conn: &Connection,
    ctx: &Ctx,
    approval: &Approval,
    payload: &str,
) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO approvals (id, decision_id, agent, session, step, tool, arguments_digest,
             status, created_at_ms, expires_at_ms, payload)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )
    .and_then(|mut s| {
        s.execute(params![
            approval.id.as_str(),
            approval.decision_id.as_str(),
            approval.agent,
            approval.session,
            approval.step,
            approval.tool,
            approval.arguments_digest,
            approval.status.as_str(),
            approval.created_at_ms,
            approval.expires_at_ms,
            payload,
        ])
    })
    .map_err(|e| ctx.err(e))?;
    Ok(())
}

pub(crate) fn get(conn: &Connection, ctx: &Ctx, id: &ApprovalId) -> Result<Option<Approval>> {
    let payload: Option<String> = conn
        .prepare_cached("SELECT payload FROM approvals WHERE id = ?1")
        .and_then(|mut s| s.query_row([id.as_str()], |r| r.get(0)).optional())
        .map_err(|e| ctx.err(e))?;
    payload.map(|p| decode(ctx, &p)).transpose()
}

pub(crate) fn list(conn: &Connection, ctx: &Ctx, filter: &ApprovalFilter) -> Result<Vec<Approval>> {
    let mut clauses = Vec::new();
    let mut values: Vec<Value> = Vec::new();
    if let Some(status) = filter.status {
        values.push(Value::Text(status.as_str().to_owned()));
        clauses.push(format!("status = ?{}", values.len()));
    }
    if let Some(agent) = &filter.agent {
        values.push(Value::Text(agent.clone()));
        clauses.push(format!("agent = ?{}", values.len()));
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
        "SELECT payload FROM approvals {condition} ORDER BY created_at_ms DESC, id DESC LIMIT ?{}",
        values.len()
    );
    payloads(conn, ctx, &sql, values)
}

pub(crate) fn latest_for(conn: &Connection, ctx: &Ctx, call: &CallKey) -> Result<Option<Approval>> {
    let payload: Option<String> = conn
        .prepare_cached(
            "SELECT payload FROM approvals
             WHERE session = ?1 AND step = ?2 AND tool = ?3 AND arguments_digest = ?4
                   AND agent = ?5
             ORDER BY created_at_ms DESC, id DESC LIMIT 1",
        )
        .and_then(|mut s| {
            s.query_row(
                params![
                    call.session,
                    call.step,
                    call.tool,
                    call.arguments_digest,
                    call.agent
                ],
                |r| r.get(0),
            )
            .optional()
        })
        .map_err(|e| ctx.err(e))?;
    payload.map(|p| decode(ctx, &p)).transpose()
}

/// Answers a pending approval, unless someone answered first or it has expired.
pub(crate) fn decide(
    conn: &Connection,
    ctx: &Ctx,
    id: &ApprovalId,
    answer: &Answer,
    now_ms: i64,
) -> Result<Decided> {
    let Some(mut approval) = get(conn, ctx, id)? else {
        return Ok(Decided::NotFound);
    };
    if approval.status != ApprovalStatus::Pending {
        return Ok(Decided::Already(approval));
    }
    if now_ms >= approval.expires_at_ms {
        expire(&mut approval);
        save(conn, ctx, &approval)?;
        return Ok(Decided::Already(approval));
    }
    approval.decided_at_ms = Some(now_ms);
    match answer {
        Answer::Approve { scope, comment, by } => {
            approval.status = ApprovalStatus::Approved;
            approval.scope = Some(*scope);
            approval.comment.clone_from(comment);
            approval.decided_by = Some(by.clone());
        }
        Answer::Reject { reason, by } => {
            approval.status = ApprovalStatus::Rejected;
            approval.comment.clone_from(reason);
            approval.decided_by = Some(by.clone());
        }
    }
    save(conn, ctx, &approval)?;
    if approval.scope == Some(ApprovalScope::Session) {
        add_grant(
            conn,
            ctx,
            &Grant {
                agent: approval.agent.clone(),
                session: approval.session.clone(),
                tool: approval.tool.clone(),
                arguments_digest: approval.arguments_digest.clone(),
                approval_id: approval.id.clone(),
                created_at_ms: now_ms,
            },
        )?;
    }
    Ok(Decided::Now(approval))
}

/// Marks one approval expired if it is pending and due; returns it as it then stands.
pub(crate) fn expire_one(
    conn: &Connection,
    ctx: &Ctx,
    id: &ApprovalId,
    now_ms: i64,
) -> Result<Option<Approval>> {
    let Some(mut approval) = get(conn, ctx, id)? else {
        return Ok(None);
    };
    if approval.status == ApprovalStatus::Pending && now_ms >= approval.expires_at_ms {
        expire(&mut approval);
        save(conn, ctx, &approval)?;
    }
    Ok(Some(approval))
}

/// Marks every pending approval that is due expired.
pub(crate) fn expire_due(conn: &Connection, ctx: &Ctx, now_ms: i64) -> Result<Vec<Approval>> {
    let mut due = payloads(
        conn,
        ctx,
        "SELECT payload FROM approvals WHERE status = 'pending' AND expires_at_ms <= ?1
         ORDER BY created_at_ms, id",
        vec![Value::Integer(now_ms)],
    )?;
    for approval in &mut due {
        expire(approval);
        save(conn, ctx, approval)?;
    }
    Ok(due)
}

/// The decision time of an expiry is the deadline itself, whenever it was noticed.
fn expire(approval: &mut Approval) {
    approval.status = ApprovalStatus::Expired;
    approval.decided_at_ms = Some(approval.expires_at_ms);
    approval.decided_by = Some(EXPIRY.to_owned());
}

fn save(conn: &Connection, ctx: &Ctx, approval: &Approval) -> Result<()> {
    let payload = encode(ctx, approval)?;
    conn.prepare_cached("UPDATE approvals SET status = ?2, payload = ?3 WHERE id = ?1")
        .and_then(|mut s| {
            s.execute(params![
                approval.id.as_str(),
                approval.status.as_str(),
                payload
            ])
        })
        .map_err(|e| ctx.err(e))?;
    Ok(())
}

fn payloads(conn: &Connection, ctx: &Ctx, sql: &str, values: Vec<Value>) -> Result<Vec<Approval>> {
    let rows: Vec<String> = conn
        .prepare_cached(sql)
        .and_then(|mut s| {
            s.query_map(params_from_iter(values), |r| r.get(0))?
                .collect()
        })
        .map_err(|e| ctx.err(e))?;
    rows.iter().map(|p| decode(ctx, p)).collect()
}

/// Stores a grant; the first grant for a call stands.
pub(crate) fn add_grant(conn: &Connection, ctx: &Ctx, grant: &Grant) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO grants (agent, session, tool, arguments_digest, approval_id, created_at_ms)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT DO NOTHING",
    )
    .and_then(|mut s| {
        s.execute(params![
            grant.agent,
            grant.session,
            grant.tool,
            grant.arguments_digest,
            grant.approval_id.as_str(),
            grant.created_at_ms,
        ])
    })
    .map_err(|e| ctx.err(e))?;
    Ok(())
}

pub(crate) fn has_grant(
    conn: &Connection,
    ctx: &Ctx,
    [agent, session, tool, digest]: [&str; 4],
) -> Result<bool> {
    conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM grants
             WHERE agent = ?1 AND session = ?2 AND tool = ?3 AND arguments_digest = ?4)",
    )
    .and_then(|mut s| s.query_row(params![agent, session, tool, digest], |r| r.get(0)))
    .map_err(|e| ctx.err(e))
}
