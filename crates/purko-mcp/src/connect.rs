//! Opening one session: spawn the child or reach the URL, `initialize`, then list the tools.
//!
//! Invariants: the whole opening is bounded by the server's `startup_timeout`; a child whose
//! opening fails or times out is killed (rmcp's child guard kills it on drop); every message
//! returned is redacted of the spec's secrets; a stdio child gets only the operator's `env` and
//! a few harmless variables of Purko's own, never Purko's whole environment.

use std::collections::HashMap;
use std::process::Stdio;
use std::sync::{Arc, Mutex};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ClientRequest, CustomRequest, Implementation,
    ProtocolVersion, ResourceUpdatedNotificationParam, ServerResult,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::sync::{Notify, broadcast};

use crate::passthrough::ServerEvent;
use crate::post::{Direct, Recorder};
use crate::registry::lock;
use crate::spec::{ServerSpec, Transport};

/// Variables of Purko's environment a stdio server inherits (as the official SDKs do); the
/// rest, which may hold Purko's own credentials, is not passed on.
const INHERITED_ENV: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR",
];

/// The most pages one `tools/list` may take, against a server that cycles cursors.
const MAX_PAGES: usize = 1000;

/// Receives the server's notifications for one session.
#[derive(Debug)]
pub(crate) struct Handler {
    relist: Arc<Notify>,
    server: String,
    events: broadcast::Sender<ServerEvent>,
}

impl Handler {
    fn tell(&self, event: ServerEvent) {
        // Nobody listening is fine: no gateway client asked.
        let _ = self.events.send(event);
    }
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.relist.notify_one();
    }

    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.tell(ServerEvent::ResourceUpdated {
            server: self.server.clone(),
            uri: params.uri,
        });
    }

    async fn on_resource_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tell(ServerEvent::ResourcesChanged {
            server: self.server.clone(),
        });
    }

    async fn on_prompt_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.tell(ServerEvent::PromptsChanged {
            server: self.server.clone(),
        });
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("purko", env!("CARGO_PKG_VERSION")),
        )
    }
}

/// An open session and what its opening learned.
pub(crate) struct Opened {
    pub running: RunningService<RoleClient, Handler>,
    pub pid: Option<u32>,
    /// `tools/call` posted by Purko on an HTTP session before the 2026-07-28 revision.
    pub direct: Option<Direct>,
    pub tools: Vec<Value>,
    pub stderr: StderrTail,
}

/// The last line a stdio child wrote to stderr, for error messages.
#[derive(Clone, Debug, Default)]
pub(crate) struct StderrTail(Arc<Mutex<Option<String>>>);

impl StderrTail {
    pub fn last(&self) -> Option<String> {
        lock(&self.0).clone()
    }
}

/// Opens a session, bounded by `startup_timeout`.
pub(crate) async fn open(
    spec: &ServerSpec,
    relist: Arc<Notify>,
    events: broadcast::Sender<ServerEvent>,
) -> Result<Opened, String> {
    let phase = Arc::new(Mutex::new("start"));
    let stderr = StderrTail::default();
    let handler = Handler {
        relist: Arc::clone(&relist),
        server: spec.name.clone(),
        events,
    };
    let attempt = open_unbounded(spec, handler, relist, &phase, &stderr);
    let result = match tokio::time::timeout(spec.startup_timeout, attempt).await {
        Ok(result) => result,
        Err(_) => Err(format!(
            "the server did not answer {} within {} s (startup timeout)",
            *lock(&phase),
            spec.startup_timeout.as_secs_f64()
        )),
    };
    result.map_err(|why| {
        let why = match stderr.last() {
            Some(line) => format!("{why}; its last stderr line: {line}"),
            None => why,
        };
        spec.redact(&why)
    })
}

async fn open_unbounded(
    spec: &ServerSpec,
    handler: Handler,
    relist: Arc<Notify>,
    phase: &Mutex<&'static str>,
    stderr: &StderrTail,
) -> Result<Opened, String> {
    *lock(phase) = "initialize";
    let (running, pid, recorder) = match &spec.transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
        } => {
            let mut cmd = tokio::process::Command::new(command);
            cmd.args(args).env_clear().kill_on_drop(true);
            for name in INHERITED_ENV {
                #[expect(
                    clippy::disallowed_methods,
                    reason = "a child gets the few variables any process needs (PATH, HOME, ...), as the MCP SDKs do; Purko's own secrets stay out"
                )]
                let value = std::env::var_os(name);
                if let Some(value) = value {
                    cmd.env(name, value);
                }
            }
            cmd.envs(env.iter().map(|(k, v)| (k, v)));
            if let Some(cwd) = cwd {
                cmd.current_dir(cwd);
            }
            let (child, err) = TokioChildProcess::builder(cmd)
                .stderr(Stdio::piped())
                .spawn()
                .map_err(|e| format!("'{command}' could not be started: {e}"))?;
            if let Some(err) = err {
                tokio::spawn(drain_stderr(err, spec.clone(), stderr.clone()));
            }
            let pid = child.id();
            let running = handler
                .serve(child)
                .await
                .map_err(|e| format!("initialize failed: {e}"))?;
            (running, pid, None)
        }
        Transport::Http { url, headers } => {
            let mut custom = HashMap::new();
            for (name, value) in headers {
                let name = reqwest::header::HeaderName::try_from(name.as_str())
                    .map_err(|_| format!("header name '{name}' is not a valid HTTP header name"))?;
                let mut value =
                    reqwest::header::HeaderValue::try_from(value.as_str()).map_err(|_| {
                        format!("the value of header '{name}' is not a valid HTTP header value")
                    })?;
                value.set_sensitive(true);
                custom.insert(name, value);
            }
            let config =
                StreamableHttpClientTransportConfig::with_uri(url.as_str()).custom_headers(custom);
            // A pooled client: rmcp's default opens a new connection per request, which costs
            // a handshake and a shutdown on every call. rmcp drains each response, so a kept
            // connection is safe to reuse.
            let client = reqwest::Client::builder()
                .no_proxy()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .map_err(|e| format!("cannot make an HTTP client for {url}: {e}"))?;
            let recorder = Recorder::new(client);
            let transport = StreamableHttpClientTransport::with_client(recorder.clone(), config);
            let running = handler.serve(transport).await.map_err(|e| {
                match recorder.failure() {
                    Some(why) => format!(
                        "initialize at {url} failed: {why}; check that the server runs and listens at that URL"
                    ),
                    None => format!("initialize at {url} failed: {e}"),
                }
            })?;
            (running, None, Some((recorder, url.as_str())))
        }
    };
    *lock(phase) = "the first tools/list";
    let tools = list_tools(running.peer())
        .await
        .map_err(|e| format!("tools/list failed: {e}"))?;
    // From 2026-07-28 on, each request carries routing headers and `_meta` of its own: those
    // calls stay on rmcp's path.
    let direct = recorder
        .filter(|_| {
            running
                .peer()
                .peer_info()
                .is_some_and(|info| info.protocol_version < ProtocolVersion::STANDARD_HEADERS)
        })
        .and_then(|(recorder, url)| recorder.direct(relist, url));
    Ok(Opened {
        running,
        pid,
        direct,
        tools,
        stderr: stderr.clone(),
    })
}

/// Every page of `tools/list`, each tool as raw JSON: rmcp's typed list would reject the whole
/// page for one malformed tool, and one bad tool must not hide the others.
pub(crate) async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<Value>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let mut seen = Vec::new();
    for _ in 0..MAX_PAGES {
        let params = cursor.as_ref().map(|c| json!({ "cursor": c }));
        let answer = peer
            .send_request(ClientRequest::CustomRequest(CustomRequest::new(
                "tools/list",
                params,
            )))
            .await
            .map_err(|e| describe(&e))?;
        let answer = match answer {
            ServerResult::ListToolsResult(list) => serde_json::to_value(list),
            other => serde_json::to_value(other),
        }
        .map_err(|e| format!("the answer cannot be read: {e}"))?;
        let Some(page) = answer.get("tools").and_then(Value::as_array) else {
            return Err("the answer has no 'tools' array".into());
        };
        tools.extend(page.iter().cloned());
        match answer.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !seen.iter().any(|c: &String| c == next) => {
                seen.push(next.to_owned());
                cursor = Some(next.to_owned());
            }
            Some(_) => return Err("the server repeated a cursor; its list never ends".into()),
            None => return Ok(tools),
        }
    }
    Err(format!("the list did not end within {MAX_PAGES} pages"))
}

/// An rmcp error as a sentence.
pub(crate) fn describe(error: &ServiceError) -> String {
    match error {
        ServiceError::McpError(e) => {
            format!("the server answered error {}: {}", e.code.0, e.message)
        }
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => {
            "the connection to the server is closed".into()
        }
        other => other.to_string(),
    }
}

async fn drain_stderr(err: tokio::process::ChildStderr, spec: ServerSpec, tail: StderrTail) {
    let mut lines = BufReader::new(err).lines();
    while let Ok(Some(line)) = lines.next_line().await {
        let line = spec.redact(&line);
        tracing::debug!(server = spec.name, "stderr: {line}");
        let line: String = line.chars().take(300).collect();
        if !line.trim().is_empty() {
            *lock(&tail.0) = Some(line);
        }
    }
}
