//! The routes. Handlers parse, check the token, hand over to the engine and shape the answer;
//! nothing is decided here.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use purko_engine::{CallRequest, Engine};
use purko_protocol::{ApprovalId, ApprovalScope, ApprovalStatus, DecisionId, Effect};
use purko_store::{Answer, ApprovalFilter, Decided, DecisionFilter};
use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::auth::Tokens;
use crate::error::ApiError;

#[derive(Clone)]
struct App {
    engine: Arc<Engine>,
    tokens: Tokens,
}

/// The API's router over an engine, with the MCP gateway of each agent at
/// `/mcp/<namespace>/<name>`.
pub fn router(engine: Arc<Engine>, tokens: Tokens) -> Router {
    let mcp = mcp_router(&engine, tokens.clone());
    Router::new()
        .route("/healthz", get(healthz))
        .route("/metrics", get(metrics))
        .route("/api/tools", get(tools))
        .route("/api/mcp/tools", get(mcp_tools))
        .route("/api/tools/call", post(call))
        .route("/api/decisions", get(decisions))
        .route("/api/decisions/{id}", get(decision))
        .route("/api/approvals", get(approvals))
        .route("/api/approvals/{id}", get(approval))
        .route("/api/approvals/{id}/approve", post(approve))
        .route("/api/approvals/{id}/reject", post(reject))
        .fallback(not_found)
        .with_state(App { engine, tokens })
        .merge(mcp)
}

/// The streamable HTTP gateway of every agent. The bearer token (agent or operator) is checked
/// before the MCP service sees the request.
fn mcp_router(engine: &Arc<Engine>, tokens: Tokens) -> Router {
    let mut router = Router::new();
    for agent in engine.agent_keys() {
        match purko_gateway::http_service(Arc::clone(engine), agent) {
            Ok(service) => router = router.nest_service(&format!("/mcp/{agent}"), service),
            Err(e) => tracing::warn!(%agent, "no MCP gateway for this agent: {e}"),
        }
    }
    router.layer(middleware::from_fn_with_state(tokens, mcp_token))
}

async fn mcp_token(State(tokens): State<Tokens>, request: Request, next: Next) -> Response {
    match tokens.caller(request.headers()) {
        Ok(_) => next.run(request).await,
        Err(e) => e.into_response(),
    }
}

async fn not_found() -> ApiError {
    ApiError::not_found(
        "no such endpoint",
        "see the API reference in crates/purko-server/README.md",
    )
}

async fn healthz(State(app): State<App>) -> Json<Value> {
    Json(json!({"status": "ok", "agents": app.engine.agent_keys().collect::<Vec<_>>()}))
}

async fn metrics(State(app): State<App>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        app.engine.metrics().render(),
    )
        .into_response()
}

/// Parses a JSON body, with a message that says what is wrong and where.
fn body<T: DeserializeOwned>(bytes: &Bytes, what: &str, example: &str) -> Result<T, ApiError> {
    let bytes = if bytes.iter().all(u8::is_ascii_whitespace) {
        &b"{}"[..]
    } else {
        &bytes[..]
    };
    serde_json::from_slice(bytes).map_err(|e| {
        let kind = if e.is_syntax() || e.is_eof() {
            "is not JSON"
        } else {
            "does not fit"
        };
        ApiError::bad_request(
            format!("the {what} body {kind}: {e}"),
            format!("send a JSON object such as {example}"),
        )
    })
}

#[derive(Deserialize)]
struct AgentQuery {
    agent: Option<String>,
}

async fn tools(
    State(app): State<App>,
    headers: HeaderMap,
    Query(q): Query<AgentQuery>,
) -> Result<Json<Value>, ApiError> {
    app.tokens.caller(&headers)?;
    let Some(agent) = q.agent else {
        return Err(ApiError::bad_request(
            "say which agent's tools to list",
            format!(
                "add ?agent=<namespace>/<name>; agents here: {}",
                app.engine.agent_keys().collect::<Vec<_>>().join(", ")
            ),
        ));
    };
    let tools = app.engine.tools(&agent)?;
    Ok(Json(json!({"agent": agent, "tools": tools})))
}

async fn mcp_tools(
    State(app): State<App>,
    headers: HeaderMap,
    Query(q): Query<AgentQuery>,
) -> Result<Json<Value>, ApiError> {
    app.tokens.caller(&headers)?;
    Ok(Json(app.engine.mcp_tools(q.agent.as_deref())?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallBody {
    agent: String,
    session: String,
    step: Step,
    name: String,
    #[serde(default = "empty_object")]
    arguments: Value,
    #[serde(default)]
    wait: Option<bool>,
    #[serde(default)]
    idempotency_key: Option<String>,
}

/// A step as a string or a number.
#[derive(Deserialize)]
#[serde(untagged)]
enum Step {
    Text(String),
    Number(u64),
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

const CALL_EXAMPLE: &str = r#"{"agent": "default/assistant", "session": "s-1", "step": 1, "name": "get_item", "arguments": {"id": "42"}, "wait": false}"#;

async fn call(
    State(app): State<App>,
    headers: HeaderMap,
    bytes: Bytes,
) -> Result<Json<Value>, ApiError> {
    app.tokens.caller(&headers)?;
    let body: CallBody = body(&bytes, "call", CALL_EXAMPLE)?;
    if body.session.is_empty() {
        return Err(ApiError::bad_request(
            "the call's session is empty",
            "give every conversation a session id: it keys approvals and idempotency",
        ));
    }
    let observation = app
        .engine
        .call(CallRequest {
            agent: body.agent,
            session: body.session,
            step: match body.step {
                Step::Text(s) => s,
                Step::Number(n) => n.to_string(),
            },
            name: body.name,
            arguments: body.arguments,
            idempotency_key: body.idempotency_key,
            wait: body.wait,
        })
        .await?;
    Ok(Json(serde_json::to_value(observation).unwrap_or_default()))
}

fn decision_id(text: &str) -> Result<DecisionId, ApiError> {
    text.parse().map_err(|e: purko_protocol::DecisionIdError| {
        ApiError::bad_request(e.to_string(), "copy the decision_id from an observation")
    })
}

fn approval_id(text: &str) -> Result<ApprovalId, ApiError> {
    text.parse().map_err(|e: purko_protocol::ApprovalIdError| {
        ApiError::bad_request(e.to_string(), "list approvals with GET /api/approvals")
    })
}

async fn decision(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    app.tokens.caller(&headers)?;
    let id = decision_id(&id)?;
    match app.engine.explain(&id).await? {
        Some((record, explanation)) => Ok(Json(json!({
            "decision": record,
            "explanation": explanation,
        }))),
        None => Err(ApiError::not_found(
            format!("no decision {id} in this server's store"),
            "decisions live in the store of the Purko that judged them; check PURKO_HOME",
        )),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionQuery {
    agent: Option<String>,
    tool: Option<String>,
    session: Option<String>,
    effect: Option<String>,
    before: Option<String>,
    limit: Option<usize>,
}

async fn decisions(
    State(app): State<App>,
    headers: HeaderMap,
    Query(q): Query<DecisionQuery>,
) -> Result<Json<Value>, ApiError> {
    app.tokens.operator(&headers)?;
    let effect = q
        .effect
        .as_deref()
        .map(str::parse::<Effect>)
        .transpose()
        .map_err(|e| ApiError::bad_request(e.to_string(), "use effect=allow, ask or deny"))?;
    let filter = DecisionFilter {
        agent: q.agent,
        tool: q.tool,
        session: q.session,
        effect,
        before: q.before.as_deref().map(decision_id).transpose()?,
        limit: q.limit.unwrap_or(50).clamp(1, 1000),
    };
    let records = app.engine.store().decisions(&filter).await?;
    Ok(Json(json!({ "decisions": records })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApprovalQuery {
    status: Option<String>,
    agent: Option<String>,
    limit: Option<usize>,
}

async fn approvals(
    State(app): State<App>,
    headers: HeaderMap,
    Query(q): Query<ApprovalQuery>,
) -> Result<Json<Value>, ApiError> {
    app.tokens.operator(&headers)?;
    let status = q
        .status
        .as_deref()
        .map(str::parse::<ApprovalStatus>)
        .transpose()
        .map_err(|e| {
            ApiError::bad_request(e, "use status=pending, approved, rejected or expired")
        })?;
    let list = app
        .engine
        .store()
        .approvals(&ApprovalFilter {
            status,
            agent: q.agent,
            limit: q.limit.unwrap_or(50).clamp(1, 1000),
        })
        .await?;
    Ok(Json(json!({ "approvals": list })))
}

async fn approval(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
) -> Result<Json<Value>, ApiError> {
    app.tokens.operator(&headers)?;
    let id = approval_id(&id)?;
    match app.engine.store().approval(&id).await? {
        Some(a) => Ok(Json(json!({ "approval": a }))),
        None => Err(no_approval(&id)),
    }
}

fn no_approval(id: &ApprovalId) -> ApiError {
    ApiError::not_found(
        format!("no approval {id}"),
        "list approvals with GET /api/approvals?status=pending",
    )
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ApproveBody {
    #[serde(default)]
    comment: Option<String>,
    #[serde(default)]
    scope: ApprovalScope,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RejectBody {
    #[serde(default)]
    reason: Option<String>,
}

async fn approve(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    app.tokens.operator(&headers)?;
    let id = approval_id(&id)?;
    let body: ApproveBody = body(&bytes, "approve", r#"{"comment": "ok", "scope": "once"}"#)?;
    let answer = Answer::Approve {
        scope: body.scope,
        comment: body.comment,
        by: "operator".into(),
    };
    decided(&id, app.engine.answer(&id, answer).await?)
}

async fn reject(
    State(app): State<App>,
    headers: HeaderMap,
    Path(id): Path<String>,
    bytes: Bytes,
) -> Result<Response, ApiError> {
    app.tokens.operator(&headers)?;
    let id = approval_id(&id)?;
    let body: RejectBody = body(&bytes, "reject", r#"{"reason": "not on production"}"#)?;
    let answer = Answer::Reject {
        reason: body.reason,
        by: "operator".into(),
    };
    decided(&id, app.engine.answer(&id, answer).await?)
}

fn decided(id: &ApprovalId, decided: Decided) -> Result<Response, ApiError> {
    match decided {
        Decided::Now(a) => Ok(Json(json!({ "approval": a })).into_response()),
        Decided::Already(a) => {
            let by = a
                .decided_by
                .as_deref()
                .map(|b| format!(" by {b}"))
                .unwrap_or_default();
            Ok((
                StatusCode::CONFLICT,
                Json(json!({
                    "error": format!("approval {id} is already {}{by}; the first answer wins", a.status.as_str()),
                    "hint": "nothing changed; read the approval to see how it was answered",
                    "approval": a,
                })),
            )
                .into_response())
        }
        Decided::NotFound => Err(no_approval(id)),
    }
}
