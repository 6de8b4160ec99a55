//! A `tools/call` forwarded on a kept session, and its answer turned into an observation.
//!
//! Invariants: every outcome is an observation with a remediation a model can follow; the call
//! is bounded by the server's `tool_timeout`, and a call that times out or whose caller goes away
//! is cancelled upstream with `notifications/cancelled`; no secret of the spec reaches the
//! observation.

use purko_protocol::{Code, Observation};
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, RequestId, ServerResult,
};
use rmcp::service::PeerRequestOptions;
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::{Map, Value, json};
use tokio::time::Instant;

use crate::connect::describe;
use crate::post::Failure;
use crate::registry::{Registry, ServerState, lock, seconds_until};
use crate::spec::ServerSpec;
use crate::tools;

/// The `_meta` key that carries Purko's idempotency key to the server.
pub const IDEMPOTENCY_META_KEY: &str = "purko.io/idempotency-key";

pub(crate) async fn call(
    registry: &Registry,
    exposed: &str,
    arguments: Map<String, Value>,
    idempotency_key: Option<&str>,
) -> Observation {
    let mut found = registry.lookup(exposed);
    if found.is_none() {
        // Seed 000: a name missing from the cache refreshes every server before failing.
        registry.refresh().await;
        found = registry.lookup(exposed);
    }
    let Some((index, upstream)) = found else {
        return not_found(registry, exposed);
    };
    let slot = &registry.inner.slots[index];
    let spec = &slot.spec;
    let session = lock(&slot.live).session.clone();
    let Some(session) = session else {
        return unavailable(registry, index);
    };

    let meta = idempotency_key.map(|key| {
        let mut meta = Map::new();
        meta.insert(
            IDEMPOTENCY_META_KEY.to_owned(),
            Value::String(key.to_owned()),
        );
        meta
    });
    let posted = match &session.direct {
        Some(direct) => {
            direct
                .call(&upstream, &arguments, meta.as_ref(), spec.tool_timeout)
                .await
        }
        None => None,
    };
    let answer = match posted {
        Some(answer) => answer,
        None => through_rmcp(&session.peer, spec, &upstream, arguments, meta).await,
    };
    match answer {
        Ok(result) => from_result(spec, &upstream, result),
        Err(Failure::Timeout(timeout)) => Observation::error(
            Code::UpstreamTimeout,
            format!(
                "'{upstream}' on MCP server '{}' did not answer within {} s and was cancelled",
                spec.name,
                timeout.as_secs_f64()
            ),
            "try again with a smaller request, or later; if it keeps timing out, tell the operator",
        ),
        Err(Failure::Server(e)) => Observation::error(
            Code::UpstreamError,
            spec.redact(&format!(
                "'{upstream}' failed on MCP server '{}': {}",
                spec.name, e.message
            )),
            "check the arguments against the tool's input schema and call it again",
        ),
        Err(Failure::Gone) => unavailable_now(spec, &upstream),
        Err(Failure::Other(why)) => Observation::error(
            Code::UpstreamError,
            spec.redact(&format!(
                "'{upstream}' on MCP server '{}' failed: {why}",
                spec.name,
            )),
            "try the call again; if it fails the same way, use another tool or tell the operator",
        ),
    }
}

/// The call sent through rmcp's client: every stdio server, and HTTP servers whose session
/// Purko does not post on itself.
async fn through_rmcp(
    peer: &Peer<RoleClient>,
    spec: &ServerSpec,
    upstream: &str,
    arguments: Map<String, Value>,
    meta: Option<Map<String, Value>>,
) -> Result<CallToolResult, Failure> {
    let params = CallToolRequestParams::new(upstream.to_owned()).with_arguments(arguments);
    let mut options = PeerRequestOptions::with_timeout(spec.tool_timeout);
    if let Some(meta) = meta {
        let mut object = rmcp::model::RequestMetaObject::new();
        for (key, value) in meta {
            object.insert(key, value);
        }
        options = options.with_meta(object);
    }
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let Ok(handle) = peer.send_request_with_option(request, options).await else {
        return Err(Failure::Gone);
    };
    // rmcp cancels upstream when its own timeout fires; the guard covers a caller that stops
    // waiting (its future dropped) before an answer or a timeout.
    let mut guard = CancelOnDrop {
        peer: Some(peer.clone()),
        id: handle.id.clone(),
    };
    let answer = handle.await_response().await;
    guard.peer = None;
    match answer {
        Ok(ServerResult::CallToolResult(result)) => Ok(result),
        Ok(other) => Err(Failure::Other(format!(
            "the server answered with something that is not a tool result: {}",
            serde_json::to_string(&other).unwrap_or_default()
        ))),
        Err(ServiceError::Timeout { timeout }) => Err(Failure::Timeout(timeout)),
        Err(ServiceError::McpError(e)) => Err(Failure::Server(e)),
        Err(ServiceError::TransportClosed | ServiceError::TransportSend(_)) => Err(Failure::Gone),
        Err(e) => Err(Failure::Other(describe(&e))),
    }
}

/// Keeps MCP's shapes: `content` as listed, `structuredContent` when the server sent it.
fn from_result(spec: &ServerSpec, upstream: &str, result: CallToolResult) -> Observation {
    if result.is_error == Some(true) {
        let text: Vec<String> = result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect();
        let text = if text.is_empty() {
            "the tool reported an error without a message".to_owned()
        } else {
            text.join("\n")
        };
        return Observation::error(
            Code::UpstreamError,
            spec.redact(&format!(
                "'{upstream}' on MCP server '{}' reported an error: {text}",
                spec.name
            )),
            "read the message, correct the arguments and call the tool again",
        );
    }
    let mut observation = json!({ "content": result.content });
    if let Some(structured) = result.structured_content {
        observation["structuredContent"] = structured;
    }
    Observation::success(observation)
}

fn not_found(registry: &Registry, exposed: &str) -> Observation {
    let tools = registry.tools();
    let near = tools::closest(exposed, tools.iter().map(|t| t.exposed.as_str()));
    let remediation = if near.is_empty() {
        "list the tools again and call one of the names listed".to_owned()
    } else {
        format!(
            "call one of the listed tools instead, for example {}",
            quote(&near)
        )
    };
    let shown: String = exposed.chars().take(128).collect();
    Observation::error(
        Code::ToolNotFound,
        format!("no registered MCP server offers a tool named '{shown}'"),
        remediation,
    )
}

fn quote(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The server has no session: it is starting, restarting or failed.
fn unavailable(registry: &Registry, index: usize) -> Observation {
    let slot = &registry.inner.slots[index];
    let live = lock(&slot.live);
    let seconds = live.next_attempt.map_or_else(
        || slot.spec.startup_timeout.as_secs().max(1),
        |at| seconds_until(at, Instant::now()).max(1),
    );
    let what = match live.state {
        ServerState::Failed => "could not be started",
        ServerState::Starting => "is starting",
        ServerState::Ready | ServerState::Restarting => "is restarting",
    };
    Observation::error(
        Code::UpstreamUnavailable,
        format!(
            "MCP server '{}' {what}; try again in {seconds} s",
            slot.spec.name
        ),
        format!("wait {seconds} s and call the tool again, or use another tool meanwhile"),
    )
    .with_retry_after(seconds)
}

/// The session closed under the call; the supervisor is already starting a new one.
fn unavailable_now(spec: &ServerSpec, upstream: &str) -> Observation {
    Observation::error(
        Code::UpstreamUnavailable,
        format!(
            "MCP server '{}' went away during the call of '{upstream}'; the server is restarting; try again in 1 s. The call may or may not have taken effect",
            spec.name
        ),
        "wait a second, check whether the call took effect, then call the tool again if it did not",
    )
    .with_retry_after(1)
}

/// Sends `notifications/cancelled` for a request whose caller stopped waiting.
struct CancelOnDrop {
    peer: Option<Peer<RoleClient>>,
    id: RequestId,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some(peer) = self.peer.take() else { return };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let params = CancelledNotificationParam::new(
            Some(self.id.clone()),
            Some("the caller stopped waiting".into()),
        );
        runtime.spawn(async move {
            let _ = peer.notify_cancelled(params).await;
        });
    }
}
