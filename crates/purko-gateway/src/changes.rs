//! What a gateway tells its client unasked about what it may see: its tool list changed (the
//! agent's view was rebuilt), and what the MCP servers it sees announce: a resource the client
//! subscribed to changed, their resource or prompt lists changed.
//!
//! A client before 2026-07-28 hears it on its session, from the moment it has initialized; from
//! 2026-07-28 on, on a `subscriptions/listen` stream, only what that stream asked for.

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError};

use purko_engine::AgentRuntime;
use purko_mcp::{Registry, ServerEvent};
use rmcp::RoleServer;
use rmcp::model::{ResourceUpdatedNotificationParam, SubscriptionFilter};
use rmcp::service::{Peer, SubscriptionSink};
use tokio::sync::broadcast::error::RecvError;

use crate::handler::Listing;

/// The resources a client subscribed to, with the server each subscription went to.
#[derive(Clone, Debug, Default)]
pub(crate) struct Subscribed(Arc<Mutex<HashSet<(String, String)>>>);

impl Subscribed {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashSet<(String, String)>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    pub fn has_uri(&self, uri: &str) -> bool {
        self.lock().iter().any(|(_, u)| u == uri)
    }

    /// Adds a subscription; `false` when it was there already.
    pub fn add(&self, server: String, uri: String) -> bool {
        self.lock().insert((server, uri))
    }

    /// Takes out the subscriptions of `uri`.
    pub fn take_uri(&self, uri: &str) -> Vec<(String, String)> {
        let mut set = self.lock();
        let taken: Vec<_> = set.iter().filter(|(_, u)| u == uri).cloned().collect();
        for key in &taken {
            set.remove(key);
        }
        taken
    }

    /// Takes out every subscription.
    pub fn take_all(&self) -> Vec<(String, String)> {
        self.lock().drain().collect()
    }

    fn has(&self, server: &str, uri: &str) -> bool {
        self.lock().iter().any(|(s, u)| s == server && u == uri)
    }
}

/// Gives the subscriptions back to the registry, in a task of their own (a gateway is dropped
/// where nothing can be awaited).
pub(crate) fn release(registry: &Registry, subscriptions: Vec<(String, String)>) {
    if subscriptions.is_empty() {
        return;
    }
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let registry = registry.clone();
    runtime.spawn(async move {
        for (server, uri) in subscriptions {
            registry.unsubscribe(&server, &uri).await;
        }
    });
}

/// Gives its subscriptions back to the registry when dropped, however the stream that held
/// them ended.
pub(crate) struct Releasing {
    pub registry: Registry,
    pub subscribed: Subscribed,
}

impl Drop for Releasing {
    fn drop(&mut self) {
        release(&self.registry, self.subscribed.take_all());
    }
}

/// Where the changes go.
pub(crate) enum To {
    /// The session of a client before 2026-07-28: everything it may see.
    Session(Peer<RoleServer>),
    /// A `subscriptions/listen` stream: what it accepted.
    Stream(SubscriptionSink, SubscriptionFilter),
}

impl To {
    fn wants_tools(&self) -> bool {
        match self {
            Self::Session(_) => true,
            Self::Stream(_, filter) => filter.tools_list_changed == Some(true),
        }
    }

    /// Says whether the client can still be told.
    async fn tools_changed(&self) -> bool {
        match self {
            Self::Session(peer) => peer.notify_tool_list_changed().await.is_ok(),
            Self::Stream(sink, _) => sink.notify_tool_list_changed().await.is_ok(),
        }
    }

    /// Passes on what a server announced, if the client asked for it; says whether the client
    /// can still be told.
    async fn pass(&self, event: &ServerEvent, subscribed: &Subscribed) -> bool {
        match (self, event) {
            (to, ServerEvent::ResourceUpdated { server, uri }) if subscribed.has(server, uri) => {
                match to {
                    Self::Session(peer) => peer
                        .notify_resource_updated(ResourceUpdatedNotificationParam::new(uri))
                        .await
                        .is_ok(),
                    Self::Stream(sink, _) => sink.notify_resource_updated(uri).await.is_ok(),
                }
            }
            (Self::Session(peer), ServerEvent::ResourcesChanged { .. }) => {
                peer.notify_resource_list_changed().await.is_ok()
            }
            (Self::Stream(sink, filter), ServerEvent::ResourcesChanged { .. })
                if filter.resources_list_changed == Some(true) =>
            {
                sink.notify_resource_list_changed().await.is_ok()
            }
            (Self::Session(peer), ServerEvent::PromptsChanged { .. }) => {
                peer.notify_prompt_list_changed().await.is_ok()
            }
            (Self::Stream(sink, filter), ServerEvent::PromptsChanged { .. })
                if filter.prompts_list_changed == Some(true) =>
            {
                sink.notify_prompt_list_changed().await.is_ok()
            }
            _ => true,
        }
    }
}

/// Tells `to` of changes until `until` ends or the client cannot be told any more.
pub(crate) async fn follow(
    to: To,
    agent: Arc<AgentRuntime>,
    listing: Arc<Listing>,
    registry: Registry,
    subscribed: Subscribed,
    until: impl Future<Output = ()>,
) {
    let mut changes = agent.view_changes();
    let mut events = registry.events();
    let mut listed = listing.tools(agent.view());
    tokio::pin!(until);
    loop {
        tokio::select! {
            () = &mut until => return,
            changed = changes.changed() => {
                if changed.is_err() {
                    return;
                }
                let now = listing.tools(agent.view());
                if now != listed {
                    listed = now;
                    if to.wants_tools() && !to.tools_changed().await {
                        return;
                    }
                }
            }
            event = events.recv() => match event {
                Ok(event) => {
                    if agent.view().mcp_servers.contains(event.server())
                        && !to.pass(&event, &subscribed).await
                    {
                        return;
                    }
                }
                // Missed changes are not told late: the lists are read fresh when asked.
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => return,
            },
        }
    }
}
