//! `tools/call` on a streamable HTTP server, posted by Purko itself on the session rmcp opened.
//!
//! rmcp's client passes each request from its service loop to its transport's worker, which
//! spawns the POST, parses the answer and sends it back the same way: several task hops, a
//! tenth of a millisecond or more on every call to an HTTP server. Purko posts `tools/call` on
//! the same session itself (the session id, revision header and operator's headers rmcp last
//! sent, which [`Recorder`] keeps) on connections of its own ([`Plain`]: plain `http://`
//! servers only), and reads the JSON or event-stream answer in the caller's task. Everything
//! else stays rmcp's: `initialize`, lists, the server's own stream, pings, reconnection, a
//! session the server has ended, and a request that could not be sent at all.
//!
//! Invariants: only a request the server refused without taking it (404 for an ended session)
//! goes back to rmcp's path, so a call is never sent twice; a call that times out or whose
//! caller goes away is cancelled on the server with `notifications/cancelled`; an answer is
//! read within [`MAX_ANSWER`] bytes; a request the server makes meanwhile is answered (a ping
//! with an empty result, anything else with "method not found", as Purko's client offers no
//! capabilities), and `notifications/tools/list_changed` re-lists as on rmcp's path.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use http_body_util::BodyExt;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, ClientJsonRpcMessage, ClientRequest, ErrorCode};
use rmcp::transport::streamable_http_client::{
    SseError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use sse_stream::{Sse, SseStream};
use tokio::sync::Notify;

use crate::plain::{Answer, BodyError, Plain, SendError};
use crate::registry::lock;

/// The most an answer may take, as rmcp's client allows for a JSON answer.
const MAX_ANSWER: usize = 16 * 1024 * 1024;
/// The header naming the session.
const SESSION_ID: &str = "mcp-session-id";
/// The most of an error answer's body kept for the message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// The path and headers of a POST on the session, made once from what rmcp last sent.
#[derive(Debug, PartialEq)]
struct Posting {
    path: http::Uri,
    headers: HeaderMap,
}

impl Posting {
    fn new(
        uri: &Arc<str>,
        session_id: Option<&Arc<str>>,
        auth: Option<&String>,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) -> Option<Self> {
        let path = http::Uri::try_from(&**uri)
            .ok()?
            .path_and_query()
            .cloned()
            .map(http::Uri::from)?;
        let mut prepared = HeaderMap::with_capacity(headers.len() + 4);
        prepared.insert(
            ACCEPT,
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        prepared.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        for (name, value) in headers {
            prepared.insert(name.clone(), value.clone());
        }
        if let Some(session) = session_id {
            prepared.insert(SESSION_ID, HeaderValue::from_str(session).ok()?);
        }
        if let Some(token) = auth {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
            value.set_sensitive(true);
            prepared.insert(AUTHORIZATION, value);
        }
        Some(Self {
            path,
            headers: prepared,
        })
    }
}

/// reqwest's client for rmcp's transport, which also keeps what rmcp's requests on the session
/// carry (session id, `MCP-Protocol-Version`, the operator's headers) for [`Direct`].
#[derive(Clone, Debug)]
pub(crate) struct Recorder {
    client: reqwest::Client,
    last: Arc<Mutex<Option<Arc<Posting>>>>,
    /// Why the last POST failed, as a sentence: rmcp's error names its own types instead.
    failure: Arc<Mutex<Option<String>>>,
}

impl Recorder {
    pub fn new(client: reqwest::Client) -> Self {
        Self {
            client,
            last: Arc::default(),
            failure: Arc::default(),
        }
    }

    /// Why the last POST failed, if it did.
    pub fn failure(&self) -> Option<String> {
        lock(&self.failure).clone()
    }

    /// Keeps why `result` failed, if it did, and hands it back.
    fn noted<T>(
        &self,
        result: Result<T, StreamableHttpError<reqwest::Error>>,
    ) -> Result<T, StreamableHttpError<reqwest::Error>> {
        *lock(&self.failure) = result.as_ref().err().map(|e| match e {
            StreamableHttpError::Client(e) => transport_failure(e),
            other => first_words(&other.to_string()),
        });
        result
    }

    /// Keeps what a POST on the session carries; `initialize` opens a session and has none.
    fn record(
        &self,
        message: &ClientJsonRpcMessage,
        uri: &Arc<str>,
        session_id: Option<&Arc<str>>,
        auth: Option<&String>,
        headers: &HashMap<HeaderName, HeaderValue>,
    ) {
        if let ClientJsonRpcMessage::Request(request) = message
            && matches!(request.request, ClientRequest::InitializeRequest(_))
        {
            return;
        }
        // A URL or header Purko cannot repeat leaves the calls to rmcp.
        let posting = Posting::new(uri, session_id, auth, headers);
        let mut last = lock(&self.last);
        if last.as_deref() != posting.as_ref() {
            *last = posting.map(Arc::new);
        }
    }

    /// Calls on the session rmcp opened with this client at `url`, once it has sent a request
    /// on it; `None` unless `url` is plain `http://` (see [`Plain`]).
    pub fn direct(&self, relist: Arc<Notify>, url: &str) -> Option<Direct> {
        let plain = Plain::new(&reqwest::Url::parse(url).ok()?)?;
        Some(Direct {
            plain: Arc::new(plain),
            last: Arc::clone(&self.last),
            relist,
            next_id: AtomicU64::new(1),
        })
    }
}

impl StreamableHttpClient for Recorder {
    type Error = reqwest::Error;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.record(
            &message,
            &uri,
            session_id.as_ref(),
            auth_header.as_ref(),
            &custom_headers,
        );
        self.noted(
            self.client
                .post_message(uri, message, session_id, auth_header, custom_headers)
                .await,
        )
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> Result<StreamableHttpPostResponse, StreamableHttpError<Self::Error>> {
        self.record(
            &message,
            &uri,
            session_id.as_ref(),
            auth_header.as_ref(),
            &custom_headers,
        );
        self.noted(
            self.client
                .post_message_with_response_limits(
                    uri,
                    message,
                    session_id,
                    auth_header,
                    custom_headers,
                    limits,
                )
                .await,
        )
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<(), StreamableHttpError<Self::Error>> {
        self.client
            .delete_session(uri, session_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.client
            .get_stream(uri, session_id, last_event_id, auth_header, custom_headers)
            .await
    }

    async fn get_stream_with_max_sse_event_size(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        max_sse_event_size: usize,
    ) -> Result<BoxStream<'static, Result<Sse, SseError>>, StreamableHttpError<Self::Error>> {
        self.client
            .get_stream_with_max_sse_event_size(
                uri,
                session_id,
                last_event_id,
                auth_header,
                custom_headers,
                max_sse_event_size,
            )
            .await
    }
}

/// A failed request as a sentence ending in its first cause ("Connection refused", a name that
/// does not resolve...), which reqwest's own message leaves out.
fn transport_failure(error: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = error;
    while let Some(next) = cause.source() {
        cause = next;
    }
    let what = if error.is_connect() {
        "cannot connect"
    } else if error.is_timeout() {
        "no answer in time"
    } else {
        "the request failed"
    };
    format!("{what}: {cause}")
}

/// The start of an error that may carry the server's whole answer (an HTML error page): its
/// first line up to any markup, within 200 characters.
fn first_words(text: &str) -> String {
    let line = text.lines().next().unwrap_or_default();
    let line = line
        .find('<')
        .map_or(line, |markup| line[..markup].trim_end_matches([':', ' ']));
    line.chars().take(200).collect()
}

/// How a call posted directly ended.
#[derive(Debug)]
pub(crate) enum Failure {
    /// No answer within the tool's timeout; the server was told to stop.
    Timeout(Duration),
    /// The server answered with a JSON-RPC error.
    Server(ErrorData),
    /// The connection or the session ended before an answer: the call may have taken effect.
    Gone,
    /// The server answered something else: a sentence saying what.
    Other(String),
}

/// `tools/call` posted on one session. See the module's comment.
#[derive(Debug)]
pub(crate) struct Direct {
    plain: Arc<Plain>,
    last: Arc<Mutex<Option<Arc<Posting>>>>,
    relist: Arc<Notify>,
    next_id: AtomicU64,
}

/// `tools/call`'s parameters, borrowed from the caller.
#[derive(Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a Map<String, Value>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a Map<String, Value>>,
}

/// A JSON-RPC message from the server, as far as the call needs it.
#[derive(Deserialize)]
struct Message {
    id: Option<Value>,
    method: Option<String>,
    result: Option<Value>,
    error: Option<ErrorData>,
}

impl Direct {
    /// The call's answer, or `None` when the server refused it without taking it (the session
    /// has ended; rmcp's path then finds out and opens a new one) or no session is known yet.
    pub async fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        meta: Option<&Map<String, Value>>,
        timeout: Duration,
    ) -> Option<Result<CallToolResult, Failure>> {
        let posting = lock(&self.last).clone()?;
        // A string id never meets the numbers rmcp's own requests use on the session.
        let id = format!("purko-{}", self.next_id.fetch_add(1, Ordering::Relaxed));
        let body = serde_json::to_string(&json!({
            "jsonrpc": "2.0",
            "id": id,
            "method": "tools/call",
            "params": CallParams { name, arguments, meta },
        }))
        .ok()?;
        let mut cancel = CancelOnDrop {
            target: Some((Arc::clone(&self.plain), Arc::clone(&posting))),
            id: id.clone(),
        };
        let answer = tokio::time::timeout(timeout, self.exchange(&posting, &id, body)).await;
        match answer {
            Ok(Some(answer)) => {
                cancel.target = None;
                Some(answer)
            }
            // Not taken: nothing to cancel.
            Ok(None) => {
                cancel.target = None;
                None
            }
            Err(_) => Some(Err(Failure::Timeout(timeout))),
        }
    }

    async fn exchange(
        &self,
        posting: &Posting,
        id: &str,
        body: String,
    ) -> Option<Result<CallToolResult, Failure>> {
        let request = self.plain.request(&posting.path, &posting.headers, body);
        let answer = match self.plain.send(request).await {
            Ok(answer) => answer,
            // Not sent: rmcp's path tries, and says what it finds.
            Err(SendError::NotSent(why)) => {
                tracing::debug!(
                    "a call was not sent on Purko's connection ({why}); rmcp's client sends it"
                );
                return None;
            }
            Err(SendError::Lost) => return Some(Err(Failure::Gone)),
        };
        let status = answer.head.status();
        if status == http::StatusCode::NOT_FOUND && posting.headers.contains_key(SESSION_ID) {
            return None;
        }
        let media = answer
            .head
            .headers()
            .get(CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.split(';').next())
            .map(|v| v.trim().to_ascii_lowercase());
        if !status.is_success() {
            let text = read_limited(answer, MAX_ERROR_BODY)
                .await
                .unwrap_or_default();
            if let Ok(Message {
                error: Some(error), ..
            }) = serde_json::from_slice::<Message>(&text)
            {
                return Some(Err(Failure::Server(error)));
            }
            let text = String::from_utf8_lossy(&text);
            let text: String = text.chars().take(300).collect();
            return Some(Err(Failure::Other(format!(
                "the server answered HTTP {status}: {text}"
            ))));
        }
        Some(match media.as_deref() {
            Some("application/json") => match read_limited(answer, MAX_ANSWER).await {
                Ok(bytes) => match serde_json::from_slice::<Message>(&bytes) {
                    Ok(message) => self.answer_of(posting, id, message).unwrap_or_else(|| {
                        Err(Failure::Other(
                            "the server answered a different request".into(),
                        ))
                    }),
                    Err(e) => Err(Failure::Other(format!(
                        "the server's answer is not JSON-RPC: {e}"
                    ))),
                },
                Err(why) => Err(why),
            },
            Some("text/event-stream") => {
                self.read_stream(posting, id, answer.limit(MAX_ANSWER))
                    .await
            }
            other => Err(Failure::Other(format!(
                "the server answered with content type {}, neither JSON nor an event stream",
                other.unwrap_or("(none)")
            ))),
        })
    }

    /// Reads events until the call's answer, handling what else the server sends meanwhile.
    async fn read_stream(
        &self,
        posting: &Posting,
        id: &str,
        answer: Answer,
    ) -> Result<CallToolResult, Failure> {
        let mut events = SseStream::new(answer);
        while let Some(event) = events.next().await {
            let event = match event {
                Ok(event) => event,
                Err(sse_stream::Error::Body(e)) if e.is::<BodyError>() => {
                    return Err(failure_of(e.downcast_ref::<BodyError>()));
                }
                Err(_) => return Err(Failure::Gone),
            };
            let Some(data) = event.data.filter(|d| !d.trim().is_empty()) else {
                continue;
            };
            let Ok(message) = serde_json::from_str::<Message>(&data) else {
                tracing::debug!("an event that is not JSON-RPC was skipped");
                continue;
            };
            if let Some(answer) = self.answer_of(posting, id, message) {
                return answer;
            }
        }
        Err(Failure::Gone)
    }

    /// The call's answer if `message` is it; otherwise handles it and gives `None`.
    fn answer_of(
        &self,
        posting: &Posting,
        id: &str,
        message: Message,
    ) -> Option<Result<CallToolResult, Failure>> {
        match (message.id, message.method) {
            (Some(Value::String(answered)), None) if answered == id => {
                Some(match (message.result, message.error) {
                    (_, Some(error)) => Err(Failure::Server(error)),
                    (Some(result), None) => serde_json::from_value(result).map_err(|e| {
                        Failure::Other(format!("the answer is not a tool result: {e}"))
                    }),
                    (None, None) => Err(Failure::Other(
                        "the answer has neither a result nor an error".into(),
                    )),
                })
            }
            (None, Some(method)) => {
                if method == "notifications/tools/list_changed" {
                    self.relist.notify_one();
                }
                None
            }
            (Some(request), Some(method)) => {
                let reply = if method == "ping" {
                    json!({ "jsonrpc": "2.0", "id": request, "result": {} })
                } else {
                    let error = ErrorData::new(
                        ErrorCode::METHOD_NOT_FOUND,
                        format!("Purko's client does not offer '{method}'"),
                        None,
                    );
                    json!({ "jsonrpc": "2.0", "id": request, "error": error })
                };
                post_and_forget(&self.plain, posting, reply.to_string());
                None
            }
            // Another request's answer, or not a message at all.
            (_, None) => None,
        }
    }
}

/// Posts `body` on the session in a task of its own, and reads the answer to its end.
fn post_and_forget(plain: &Arc<Plain>, posting: &Posting, body: String) {
    let plain = Arc::clone(plain);
    let request = plain.request(&posting.path, &posting.headers, body);
    tokio::spawn(async move {
        if let Ok(answer) = plain.send(request).await {
            let _ = read_limited(answer, MAX_ERROR_BODY).await;
        }
    });
}

/// The whole body, within `max` bytes.
async fn read_limited(answer: Answer, max: usize) -> Result<Bytes, Failure> {
    match answer.limit(max).collect().await {
        Ok(body) => Ok(body.to_bytes()),
        Err(e) => Err(failure_of(Some(&e))),
    }
}

/// What a body that could not be read means for the call.
fn failure_of(error: Option<&BodyError>) -> Failure {
    match error {
        Some(too_large @ BodyError::TooLarge(_)) => Failure::Other(too_large.to_string()),
        _ => Failure::Gone,
    }
}

/// Sends `notifications/cancelled` for a call whose caller stopped waiting or that timed out.
struct CancelOnDrop {
    target: Option<(Arc<Plain>, Arc<Posting>)>,
    id: String,
}

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        let Some((plain, posting)) = self.target.take() else {
            return;
        };
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let notice = json!({ "jsonrpc": "2.0", "method": "notifications/cancelled", "params": {
            "requestId": self.id, "reason": "the caller stopped waiting" } });
        post_and_forget(&plain, &posting, notice.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::first_words;

    #[test]
    fn an_error_page_in_an_answer_is_cut_at_its_markup() {
        assert_eq!(
            first_words(
                "unexpected server response: HTTP 404 Not Found: <!DOCTYPE html>\n<html lang=\"en\">"
            ),
            "unexpected server response: HTTP 404 Not Found"
        );
        assert_eq!(
            first_words("Session expired (HTTP 404)"),
            "Session expired (HTTP 404)"
        );
        assert_eq!(first_words(&"x".repeat(500)).len(), 200);
    }
}
