//! One task per server: open a session, keep it, re-list on `list_changed`, and start again
//! with backoff when it ends.
//!
//! Invariants: a slot's `session` is `Some` only while that session is open; a re-list's result
//! is stored only if its session is still the current one; the supervisor never panics on what
//! a server sends, and a failure is written to the slot's status, not raised.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::time::Instant;

use crate::connect::{self, Opened};
use crate::registry::{Inner, ServerState, Session, lock};
use crate::tools;

/// The first delay before a new attempt; it doubles up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(250);
const MAX_BACKOFF: Duration = Duration::from_secs(30);
/// A session that lasted this long resets the backoff.
const HEALTHY: Duration = Duration::from_mins(1);
/// How long a closing session may take before it is dropped (which kills a child).
const CLOSE_GRACE: Duration = Duration::from_secs(3);

static SESSION_IDS: AtomicU64 = AtomicU64::new(1);

#[derive(Debug)]
struct Backoff(Duration);

impl Backoff {
    fn next(&mut self) -> Duration {
        let delay = self.0;
        self.0 = (self.0 * 2).min(MAX_BACKOFF);
        delay
    }

    fn reset(&mut self) {
        self.0 = FIRST_BACKOFF;
    }
}

pub(crate) async fn supervise(inner: Arc<Inner>, index: usize) {
    let slot = &inner.slots[index];
    let mut stop = inner.stop.subscribe();
    let mut backoff = Backoff(FIRST_BACKOFF);
    loop {
        if *stop.borrow_and_update() {
            return;
        }
        let opened = tokio::select! {
            opened = connect::open(&slot.spec, slot.relist.clone(), inner.events.clone()) => opened,
            _ = stop.changed() => return,
        };
        let (state, why) = match opened {
            Ok(opened) => {
                let since = Instant::now();
                let Some(why) = keep(&inner, index, opened, &mut stop).await else {
                    return;
                };
                if since.elapsed() >= HEALTHY {
                    backoff.reset();
                }
                (ServerState::Restarting, why)
            }
            Err(why) => (ServerState::Failed, why),
        };
        let delay = backoff.next();
        tracing::warn!(server = slot.spec.name, "{why}; trying again in {delay:?}");
        {
            let mut live = lock(&slot.live);
            live.state = state;
            live.settled = true;
            live.last_error = Some(why);
            live.session = None;
            live.pid = None;
            // The last list stays exposed: a call meanwhile gets UPSTREAM_UNAVAILABLE with a
            // retry hint rather than TOOL_NOT_FOUND, and agents' tool lists do not flicker.
            live.next_attempt = Some(Instant::now() + delay);
        }
        inner.changed();
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            _ = stop.changed() => return,
        }
        {
            let mut live = lock(&slot.live);
            live.restarts += 1;
            live.next_attempt = None;
        }
    }
}

/// Runs an open session until it ends (returns why) or the registry stops (returns `None`).
async fn keep(
    inner: &Arc<Inner>,
    index: usize,
    opened: Opened,
    stop: &mut tokio::sync::watch::Receiver<bool>,
) -> Option<String> {
    let slot = &inner.slots[index];
    let Opened {
        running,
        pid,
        direct,
        tools: raw,
        stderr,
    } = opened;
    let session = Session {
        id: SESSION_IDS.fetch_add(1, Ordering::Relaxed),
        peer: running.peer().clone(),
        direct: direct.map(Arc::new),
    };
    let accepted = tools::accept(&raw, &slot.spec.catalogue);
    {
        let mut live = lock(&slot.live);
        live.state = ServerState::Ready;
        live.settled = true;
        live.last_error = None;
        live.warnings = accepted.warnings;
        live.tools = accepted.tools;
        live.protocol_version = running
            .peer()
            .peer_info()
            .map(|info| info.protocol_version.to_string());
        live.pid = pid;
        live.session = Some(session.clone());
        live.next_attempt = None;
    }
    inner.changed();
    tracing::info!(server = slot.spec.name, "ready");
    // What gateway clients subscribed to on the last session, asked again on this one.
    tokio::spawn(crate::passthrough::resubscribe(
        slot.spec.clone(),
        session.clone(),
        crate::passthrough::subscribed_on(inner, &slot.spec.name),
    ));

    let cancel = running.cancellation_token();
    let waiting = running.waiting();
    tokio::pin!(waiting);
    loop {
        tokio::select! {
            quit = &mut waiting => {
                let why = match quit {
                    Ok(rmcp::service::QuitReason::Cancelled) => "the session was cancelled".to_owned(),
                    Ok(_) => "the server closed the session (the process exited or the connection dropped)".to_owned(),
                    Err(e) => format!("the session task failed: {e}"),
                };
                let why = match stderr.last() {
                    Some(line) => format!("{why}; its last stderr line: {line}"),
                    None => why,
                };
                return Some(slot.spec.redact(&why));
            }
            () = slot.relist.notified() => relist(inner, index, &session).await,
            _ = stop.changed() => {
                cancel.cancel();
                let _ = tokio::time::timeout(CLOSE_GRACE, &mut waiting).await;
                let mut live = lock(&slot.live);
                live.session = None;
                live.pid = None;
                return None;
            }
        }
    }
}

/// Lists a server's tools again; on failure the old list stays and the reason is reported.
pub(crate) async fn relist(inner: &Inner, index: usize, session: &Session) {
    let slot = &inner.slots[index];
    let listed = tokio::time::timeout(
        slot.spec.startup_timeout,
        connect::list_tools(&session.peer),
    )
    .await
    .unwrap_or_else(|_| Err("tools/list timed out".into()));
    {
        let mut live = lock(&slot.live);
        if live.session.as_ref().map(|s| s.id) != Some(session.id) {
            return;
        }
        match listed {
            Ok(raw) => {
                let accepted = tools::accept(&raw, &slot.spec.catalogue);
                live.tools = accepted.tools;
                live.warnings = accepted.warnings;
            }
            Err(why) => {
                let why = slot.spec.redact(&format!(
                    "re-listing tools failed, the previous list is kept: {why}"
                ));
                tracing::warn!(server = slot.spec.name, "{why}");
                live.warnings
                    .retain(|w| !w.starts_with("re-listing tools failed"));
                live.warnings.push(why);
            }
        }
    }
    inner.changed();
}
