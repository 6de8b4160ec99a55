//! The registry: every registered server, its kept session and its cached tools.
//!
//! Invariants: each server has exactly one supervisor task and at most one live session, shared
//! by every caller; [`Registry::tools`] answers from the cache and never awaits; a server's
//! trouble changes only that server's status, never the others'.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use purko_protocol::{Observation, ToolSpec};
use rmcp::Peer;
use rmcp::RoleClient;
use serde::Serialize;
use serde_json::Value;
use tokio::sync::{Notify, broadcast, watch};
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::passthrough::ServerEvent;
use crate::post::Direct;
use crate::spec::ServerSpec;
use crate::tools::{self, McpTool};

/// The registered MCP servers. Cheap to clone: clones share the servers and their sessions.
#[derive(Clone, Debug)]
pub struct Registry {
    pub(crate) inner: Arc<Inner>,
}

/// How many announced changes wait for a slow gateway before it misses the oldest.
const EVENTS: usize = 256;

/// Where a server is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ServerState {
    /// The first connection attempt is under way.
    Starting,
    /// Initialized and listed; calls go through.
    Ready,
    /// The session ended (the process exited, the connection dropped); a new one is coming.
    Restarting,
    /// The last attempt failed; another follows after a backoff.
    Failed,
}

/// One server as an operator sees it. Holds no secret.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    /// Why the last attempt or session ended, with secrets redacted.
    pub last_error: Option<String>,
    /// Tools dropped from the list and other non-fatal findings.
    pub warnings: Vec<String>,
    /// How many times the server was started or connected again.
    pub restarts: u32,
    /// The protocol revision the session negotiated.
    pub protocol_version: Option<String>,
    pub tool_count: usize,
    /// Resources subscribed on the server for gateway clients (each once, however many ask).
    pub subscriptions: usize,
    /// The child process of a stdio server while it runs.
    pub pid: Option<u32>,
    /// Seconds until the next attempt, while one is scheduled.
    pub retry_in_seconds: Option<u64>,
}

#[derive(Debug)]
pub(crate) struct Inner {
    pub slots: Vec<Slot>,
    union: RwLock<Arc<Union>>,
    changes: watch::Sender<u64>,
    pub stop: watch::Sender<bool>,
    tasks: Mutex<Vec<JoinHandle<()>>>,
    /// Changes the servers announced, for gateways to pass on.
    pub events: broadcast::Sender<ServerEvent>,
    /// Resources subscribed on each server, by server and URI, with how many gateway clients
    /// asked.
    pub subscribed: Mutex<HashMap<(String, String), usize>>,
    /// Held across a subscription's upstream request, so one subscription is sent once.
    pub subscribing: tokio::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct Union {
    tools: Arc<Vec<McpTool>>,
    by_name: HashMap<String, usize>,
}

#[derive(Debug)]
pub(crate) struct Slot {
    pub spec: ServerSpec,
    pub live: Mutex<Live>,
    /// Woken by `notifications/tools/list_changed`; coalesces floods into one re-list.
    pub relist: Arc<Notify>,
}

/// A live session: the peer every caller shares, and an id so a late answer from an old
/// session is not taken for the new one's.
#[derive(Clone, Debug)]
pub(crate) struct Session {
    pub id: u64,
    pub peer: Peer<RoleClient>,
    pub direct: Option<Arc<Direct>>,
}

#[derive(Debug)]
pub(crate) struct Live {
    pub state: ServerState,
    pub settled: bool,
    pub last_error: Option<String>,
    pub warnings: Vec<String>,
    pub restarts: u32,
    pub protocol_version: Option<String>,
    pub pid: Option<u32>,
    pub tools: Vec<ToolSpec>,
    pub session: Option<Session>,
    pub next_attempt: Option<Instant>,
}

/// Whole seconds from `now` to `at`, rounded up.
pub(crate) fn seconds_until(at: Instant, now: Instant) -> u64 {
    let left = at.saturating_duration_since(now);
    left.as_secs() + u64::from(left.subsec_nanos() > 0)
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Registry {
    /// Starts one supervisor task per server and returns at once; a server that cannot start
    /// is reported in [`Registry::servers`], never as an error. Call inside a Tokio runtime.
    pub fn start(specs: Vec<ServerSpec>) -> Registry {
        purko_http::install_crypto();
        let slots = specs
            .into_iter()
            .map(|spec| Slot {
                spec,
                live: Mutex::new(Live {
                    state: ServerState::Starting,
                    settled: false,
                    last_error: None,
                    warnings: Vec::new(),
                    restarts: 0,
                    protocol_version: None,
                    pid: None,
                    tools: Vec::new(),
                    session: None,
                    next_attempt: None,
                }),
                relist: Arc::new(Notify::new()),
            })
            .collect();
        let inner = Arc::new(Inner {
            slots,
            union: RwLock::new(Arc::default()),
            changes: watch::channel(0).0,
            stop: watch::channel(false).0,
            tasks: Mutex::new(Vec::new()),
            events: broadcast::channel(EVENTS).0,
            subscribed: Mutex::default(),
            subscribing: tokio::sync::Mutex::default(),
        });
        let tasks = (0..inner.slots.len())
            .map(|index| tokio::spawn(crate::supervisor::supervise(inner.clone(), index)))
            .collect();
        *lock(&inner.tasks) = tasks;
        Registry { inner }
    }

    /// Waits until every server has been ready or has failed at least once, or `timeout`.
    pub async fn ready(&self, timeout: Duration) {
        let mut changes = self.changes();
        let settled = async {
            loop {
                if self.inner.slots.iter().all(|s| lock(&s.live).settled) {
                    return;
                }
                if changes.changed().await.is_err() {
                    return;
                }
            }
        };
        let _timed_out = tokio::time::timeout(timeout, settled).await;
    }

    /// The cached union of every ready server's tools, in server order then upstream order.
    pub fn tools(&self) -> Arc<Vec<McpTool>> {
        self.inner.union().tools.clone()
    }

    /// Every server's status, in registration order.
    pub fn servers(&self) -> Vec<ServerStatus> {
        let now = Instant::now();
        let subscribed = lock(&self.inner.subscribed).clone();
        self.inner
            .slots
            .iter()
            .map(|slot| {
                let subscriptions = subscribed
                    .keys()
                    .filter(|(server, _)| *server == slot.spec.name)
                    .count();
                let live = lock(&slot.live);
                ServerStatus {
                    name: slot.spec.name.clone(),
                    state: live.state,
                    last_error: live.last_error.clone(),
                    warnings: live.warnings.clone(),
                    restarts: live.restarts,
                    protocol_version: live.protocol_version.clone(),
                    tool_count: live.tools.len(),
                    subscriptions,
                    pid: live.pid,
                    retry_in_seconds: live.next_attempt.map(|at| seconds_until(at, now)),
                }
            })
            .collect()
    }

    /// Bumped whenever a server's tools or state change.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// Changes the servers announce from now on: resources updated (those subscribed through
    /// [`Registry::subscribe`]), resource and prompt lists changed.
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        self.inner.events.subscribe()
    }

    /// Lists every ready server's tools again now.
    pub async fn refresh(&self) {
        let jobs = (0..self.inner.slots.len()).map(|index| {
            let inner = self.inner.clone();
            async move {
                let session = lock(&inner.slots[index].live).session.clone();
                if let Some(session) = session {
                    crate::supervisor::relist(&inner, index, &session).await;
                }
            }
        });
        for job in jobs {
            job.await;
        }
    }

    /// Calls a tool by the name agents see. Never fails: every outcome is an observation.
    pub async fn call(
        &self,
        exposed_name: &str,
        arguments: serde_json::Map<String, Value>,
        idempotency_key: Option<&str>,
    ) -> Observation {
        crate::call::call(self, exposed_name, arguments, idempotency_key).await
    }

    /// Stops every supervisor and closes every session (stdio children are ended).
    pub async fn shutdown(&self) {
        self.inner.stop.send_replace(true);
        let tasks = std::mem::take(&mut *lock(&self.inner.tasks));
        for task in tasks {
            let _ = task.await;
        }
    }

    /// The server and upstream name behind an exposed name, from the cache.
    pub(crate) fn lookup(&self, exposed: &str) -> Option<(usize, String)> {
        let union = self.inner.union();
        let tool = &union.tools[*union.by_name.get(exposed)?];
        let index = self
            .inner
            .slots
            .iter()
            .position(|s| s.spec.name == tool.server)?;
        Some((index, tool.upstream.clone()))
    }
}

impl Inner {
    fn union(&self) -> Arc<Union> {
        self.union
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Recomputes the union from every slot's tools and tells the watchers.
    pub fn changed(&self) {
        let lists: Vec<(String, Vec<ToolSpec>)> = self
            .slots
            .iter()
            .map(|s| (s.spec.name.clone(), lock(&s.live).tools.clone()))
            .collect();
        let tools = tools::union(lists.iter().map(|(n, t)| (n.as_str(), t.as_slice())));
        let by_name = tools
            .iter()
            .enumerate()
            .map(|(i, t)| (t.exposed.clone(), i))
            .collect();
        *self.union.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(Union {
            tools: Arc::new(tools),
            by_name,
        });
        self.changes.send_modify(|n| *n = n.wrapping_add(1));
    }
}
