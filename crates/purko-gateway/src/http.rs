//! The gateway over streamable HTTP, as a service `purko serve` mounts per agent. It keeps
//! rmcp's `Host` check (loopback names only) against DNS rebinding; the bearer token is checked
//! by the router in front of it.
//!
//! rmcp's service runs every request through its own machinery: a serve loop spawned per
//! stateless request (or the session's worker), then a task for the handler, each a channel hop
//! away. A `tools/call` needs none of it when nothing but the client's answer (and its progress)
//! goes back on the request: on the 2026-07-28 revision, which has no session, and in a session
//! of an older revision whose client cannot be asked for a form. The fast path here answers
//! those after the same checks rmcp makes, with a JSON answer, or an event stream when the call
//! sends progress first (while it waits for a person). Everything else goes to rmcp untouched:
//! `initialize`, lists, prompts, resources, notifications, sessions whose client can elicit
//! (rmcp routes `elicitation/create`), one call a minute of every session (rmcp's worker ends a
//! session after five minutes without traffic it sees), and any request that is unusual in any
//! way (rmcp then gives the errors).

use std::convert::Infallible;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodRouter, any};
use purko_engine::Engine;
use rmcp::ErrorData;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, JsonRpcVersion2_0, ProtocolVersion, RequestId,
    RequestMetaObject, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::SessionId;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use serde::Deserialize;
use tokio::sync::mpsc;

use crate::elicit::ProgressTo;
use crate::error::Result;
use crate::handler::{Gateway, Incoming, Listing, Session, Sessions};

/// The streamable HTTP service of one agent's gateway, to mount with `nest_service`.
pub type McpService = MethodRouter;

/// The largest body the fast path reads; rmcp's own limit (4 MiB) holds for the rest, and a
/// larger call goes to rmcp, which refuses it with its message.
const FAST_BODY_LIMIT: usize = 4 * 1024 * 1024;

/// A streamable HTTP service for `agent`; each MCP session gets its own [`Gateway`] (its own
/// step counter), and so does each stateless request. An unknown agent is an error here.
pub fn http_service(engine: Arc<Engine>, agent: &str) -> Result<McpService> {
    let gateways = Gateways {
        engine,
        agent: agent.to_owned(),
        listing: Arc::new(Listing::default()),
        sessions: Arc::new(Sessions::default()),
    };
    gateways.make()?;
    let made = gateways.clone();
    let kept = Arc::new(LocalSessionManager::default());
    let rmcp = StreamableHttpService::new(
        move || {
            made.make()
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()))
        },
        Arc::clone(&kept),
        config(),
    );
    Ok(any(handle).with_state(Service {
        rmcp,
        kept,
        gateways: Arc::new(gateways),
    }))
}

#[derive(Clone)]
struct Service {
    rmcp: StreamableHttpService<Gateway, LocalSessionManager>,
    /// The sessions rmcp keeps (a closed one may linger among the fast path's for a moment).
    kept: Arc<LocalSessionManager>,
    gateways: Arc<Gateways>,
}

/// Makes the gateway of one session or one stateless request.
#[derive(Clone)]
struct Gateways {
    engine: Arc<Engine>,
    agent: String,
    listing: Arc<Listing>,
    sessions: Arc<Sessions>,
}

impl Gateways {
    fn make(&self) -> Result<Gateway> {
        Ok(Gateway::new(Arc::clone(&self.engine), &self.agent)?
            .with_listing(Arc::clone(&self.listing))
            .with_sessions(Arc::clone(&self.sessions)))
    }
}

/// How often at least one call of a session goes through rmcp's session worker, which ends a
/// session after five minutes without traffic it sees.
const ROUTE_EVERY_MS: i64 = 60_000;

/// Which calls the fast path answers.
enum Route {
    /// 2026-07-28: no session.
    Stateless,
    /// A session of an older revision that rmcp keeps, whose client cannot be asked for a form.
    Session(String, Arc<Session>),
}

/// rmcp's defaults (loopback `Host` names only, sessions for clients on revisions before
/// 2026-07-28), but a plain JSON answer where a call sends nothing before its result: no event
/// stream to open and frame for every call. A call that does send something first (an
/// elicitation on an older revision) still gets an event stream.
fn config() -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default();
    config.json_response = true;
    config
}

async fn handle(State(service): State<Service>, request: Request) -> Response {
    // A session the fast path knows may have just been closed: rmcp's word is the last.
    let route = match fast_route(
        request.method(),
        request.headers(),
        &service.gateways.sessions,
    ) {
        Some(Route::Session(id, _))
            if !service
                .kept
                .has_session(&SessionId::from(id.as_str()))
                .await
                .unwrap_or(false) =>
        {
            None
        }
        route => route,
    };
    let Some(route) = route else {
        return service.rmcp.handle(request).await.map(Body::new);
    };
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, FAST_BODY_LIMIT).await {
        Ok(bytes) => bytes,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                format!("Bad Request: the request body could not be read: {e}"),
            )
                .into_response();
        }
    };
    if let Some(call) = fast_call(&bytes, &parts.headers, &route) {
        return answer(&service.gateways, call, route).await;
    }
    let request = Request::from_parts(parts, Body::from(bytes));
    service.rmcp.handle(request).await.map(Body::new)
}

/// Whether the headers are those of a well-formed `tools/call` the fast path answers, as rmcp
/// would accept it: a `POST` to a loopback `Host` that accepts JSON and event streams, sends
/// JSON of a stated length within the limit and names a known revision; from 2026-07-28 on,
/// outside any session and with the routing headers `Mcp-Method: tools/call` and a plain
/// `Mcp-Name`; before it, in a session rmcp keeps on that revision whose client cannot be
/// asked for a form (and not the first call in a minute, which goes through rmcp's worker).
fn fast_route(method: &Method, headers: &HeaderMap, sessions: &Sessions) -> Option<Route> {
    let one = |name: &str| -> Option<&str> {
        let mut values = headers.get_all(name).iter();
        let value = values.next()?.to_str().ok()?;
        values.next().is_none().then_some(value)
    };
    let accepts = one(header::ACCEPT.as_str()).is_some_and(|accept| {
        accept.contains("application/json") && accept.contains("text/event-stream")
    });
    let json = one(header::CONTENT_TYPE.as_str()).is_some_and(|t| {
        t.split(';')
            .next()
            .is_some_and(|e| e.trim().eq_ignore_ascii_case("application/json"))
    });
    let sized = one(header::CONTENT_LENGTH.as_str())
        .and_then(|n| n.parse::<usize>().ok())
        .is_some_and(|n| n <= FAST_BODY_LIMIT);
    let version = one("mcp-protocol-version").filter(|v| {
        ProtocolVersion::KNOWN_VERSIONS
            .iter()
            .any(|known| known.as_str() == *v)
    })?;
    if *method != Method::POST
        || !loopback_host(one(header::HOST.as_str()))
        || !accepts
        || !json
        || !sized
    {
        return None;
    }
    let modern = version >= ProtocolVersion::V_2026_07_28.as_str();
    match headers.get("mcp-session-id") {
        None if modern => (one("mcp-method") == Some("tools/call")
            && one("mcp-name").is_some_and(|name| !name.starts_with("=?")))
        .then_some(Route::Stateless),
        Some(_) if !modern => {
            let id = one("mcp-session-id")?;
            let session = sessions.get(id)?;
            if session.elicits || session.protocol.as_str() != version {
                return None;
            }
            let now = purko_engine::now_ms();
            if now - session.routed_at_ms.load(Ordering::Relaxed) > ROUTE_EVERY_MS {
                session.routed_at_ms.store(now, Ordering::Relaxed);
                return None;
            }
            Some(Route::Session(id.to_owned(), session))
        }
        _ => None,
    }
}

/// The `Host` names rmcp's default configuration allows.
fn loopback_host(host: Option<&str>) -> bool {
    let Some(host) = host else { return false };
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split_once(']').map_or(host, |(name, _)| name),
        None => host.split_once(':').map_or(host, |(name, _)| name),
    };
    matches!(name, "localhost" | "127.0.0.1" | "::1")
}

/// The call in the body, when it is one the fast path answers: a single `tools/call` request;
/// on 2026-07-28, whose `_meta` carries every key the revision requires, names the revision of
/// the `MCP-Protocol-Version` header, and calls the tool `Mcp-Name` names; in a session of an
/// older revision, whose `_meta` names no revision (rmcp would check it against the header).
fn fast_call(body: &Bytes, headers: &HeaderMap, route: &Route) -> Option<FastCall> {
    // The one shape read directly: rmcp's general message type tries each kind of message in
    // turn, which costs more than the rest of the checks together.
    let Ok(CallMessage {
        jsonrpc: JsonRpcVersion2_0,
        id,
        method,
        mut params,
    }) = serde_json::from_slice::<CallMessage>(body)
    else {
        return None;
    };
    if method != "tools/call" {
        return None;
    }
    let meta = params.meta.take().unwrap_or_default();
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let fits = match route {
        Route::Stateless => {
            meta.missing_required_keys(&ProtocolVersion::V_2026_07_28)
                .is_empty()
                && meta
                    .protocol_version()
                    .as_ref()
                    .map(ProtocolVersion::as_str)
                    == header("mcp-protocol-version")
                && header("mcp-name") == Some(&*params.name)
        }
        Route::Session(..) => meta.protocol_version().is_none(),
    };
    fits.then_some(FastCall { id, params, meta })
}

/// A single JSON-RPC request whose parameters are those of `tools/call`.
#[derive(Deserialize)]
struct CallMessage {
    jsonrpc: JsonRpcVersion2_0,
    id: RequestId,
    method: String,
    params: CallToolRequestParams,
}

/// A call the fast path answers.
struct FastCall {
    id: RequestId,
    params: CallToolRequestParams,
    meta: RequestMetaObject,
}

/// Runs the call through a gateway of its own, as rmcp's stateless path would, and answers
/// with the JSON-RPC response; or, when the call has something to say before its result (its
/// progress while it waits for a person), with an event stream of those and then the result.
async fn answer(gateways: &Gateways, call: FastCall, route: Route) -> Response {
    let FastCall { id, params, meta } = call;
    let gateway = match gateways.make() {
        Ok(gateway) => gateway,
        Err(e) => return (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    };
    let (sender, mut events) = mpsc::channel(16);
    let progress = Some(ProgressTo::Stream(sender.clone()));
    let (gateway, incoming) = match route {
        Route::Stateless => (
            gateway,
            Incoming {
                session_id: None,
                stateless: true,
                protocol: meta.protocol_version(),
                capabilities: meta.client_capabilities(),
                meta,
                peer: None,
                progress,
            },
        ),
        Route::Session(id, session) => (
            gateway.with_steps(Arc::clone(&session.steps)),
            Incoming {
                session_id: Some(id),
                stateless: false,
                protocol: Some(session.protocol.clone()),
                capabilities: Some(session.capabilities.clone()),
                meta,
                peer: None,
                progress,
            },
        ),
    };
    let mut call = Box::pin(async move {
        let result = gateway.call(params, incoming).await;
        message(id, result)
    });
    tokio::select! {
        biased;
        message = &mut call => json(&message),
        Some(first) = events.recv() => {
            // The call goes on in a task of its own, and its result ends the stream.
            tokio::spawn(async move {
                let _ = sender.send(call.await).await;
            });
            let stream = futures::stream::unfold((Some(first), events), |(first, mut events)| async move {
                let message = match first {
                    Some(message) => message,
                    None => events.recv().await?,
                };
                Some((Ok::<_, Infallible>(event(&message)), (None, events)))
            });
            (
                [
                    (header::CONTENT_TYPE, "text/event-stream"),
                    (header::CACHE_CONTROL, "no-cache"),
                ],
                Body::from_stream(stream),
            )
                .into_response()
        }
    }
}

fn message(id: RequestId, result: Result<CallToolResponse, ErrorData>) -> ServerJsonRpcMessage {
    match result {
        Ok(result) => ServerJsonRpcMessage::response(ServerResult::from(result), id),
        Err(error) => ServerJsonRpcMessage::error(error, Some(id)),
    }
}

fn json(message: &ServerJsonRpcMessage) -> Response {
    match serde_json::to_vec(message) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the answer could not be written as JSON: {e}"),
        )
            .into_response(),
    }
}

/// One server-sent event carrying a JSON-RPC message.
fn event(message: &ServerJsonRpcMessage) -> Bytes {
    let data = serde_json::to_string(message).unwrap_or_else(|e| {
        format!(r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"error","data":"Purko could not write a message: {e}"}}}}"#)
    });
    Bytes::from(format!("event: message\ndata: {data}\n\n"))
}
