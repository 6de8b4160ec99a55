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
use purko_mcp::{PassError, Registry, Sees, ServerEvent};
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

    fn has_uri(&self, uri: &str) -> bool {
        self.lock().iter().any(|(_, u)| u == uri)
    }

    /// Adds a subscription; `false` when it was there already.
    fn add(&self, server: String, uri: String) -> bool {
        self.lock().insert((server, uri))
    }

    /// Takes out the subscriptions of `uri`.
    fn take_uri(&self, uri: &str) -> Vec<(String, String)> {
        let mut set = self.lock();
        let taken: Vec<_> = set.iter().filter(|(_, u)| u == uri).cloned().collect();
        for key in &taken {
            set.remove(key);
        }
        taken
    }

    /// Takes out every subscription.
    fn take_all(&self) -> Vec<(String, String)> {
        self.lock().drain().collect()
    }

    fn has(&self, server: &str, uri: &str) -> bool {
        self.lock().iter().any(|(s, u)| s == server && u == uri)
    }
}

/// A client's subscriptions (its session's, or one listen stream's): taken from the registry,
/// and given back when this is dropped (the session closed, the stream ended), if not before.
#[derive(Debug)]
pub(crate) struct Subscriptions {
    registry: Registry,
    held: Subscribed,
}

impl Subscriptions {
    pub fn new(registry: Registry) -> Self {
        Self {
            registry,
            held: Subscribed::default(),
        }
    }

    /// What is held, for [`follow`] to pass on.
    pub fn held(&self) -> Subscribed {
        self.held.clone()
    }

    /// Subscribes to `uri` on the seen server that has it, once for this client.
    pub async fn subscribe(&self, sees: Sees<'_>, uri: &str) -> Result<(), PassError> {
        if self.held.has_uri(uri) {
            return Ok(());
        }
        let server = self.registry.subscribe(sees, uri).await?;
        if !self.held.add(server.clone(), uri.to_owned()) {
            // The same subscription, asked twice at once: one is enough.
            self.registry.unsubscribe(&server, uri).await;
        }
        Ok(())
    }

    /// Gives back the subscription of `uri`.
    pub async fn unsubscribe(&self, uri: &str) {
        for (server, uri) in self.held.take_uri(uri) {
            self.registry.unsubscribe(&server, &uri).await;
        }
    }
}

impl Drop for Subscriptions {
    fn drop(&mut self) {
        let held = self.held.take_all();
        // Given back in a task of its own: nothing can be awaited here.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        if held.is_empty() {
            return;
        }
        let registry = self.registry.clone();
        runtime.spawn(async move {
            for (server, uri) in held {
                registry.unsubscribe(&server, &uri).await;
            }
        });
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
