//! Prompts and resources of the registered servers, passed on to a gateway's client for the
//! servers its agent sees.
//!
//! They run nothing on the server's side, so they are not judged like tool calls. A prompt's
//! name is prefixed `server/` where two seen servers share it, as tool names are; a resource
//! keeps its URI, and reading one asks the seen servers in turn until one has it (seed 000's
//! "try every client"). Every request is bounded by the server's `tool_timeout`; a server that
//! fails a listing is left out of it (and logged), never failing the others.
//!
//! A subscription to a resource goes to the seen server that has it (one that reads it), once
//! however many gateway clients ask: the registry counts them, unsubscribes upstream when the
//! last one goes, and subscribes again on a server's new session after a restart. What the
//! servers announce ([`ServerEvent`]) is broadcast for the gateways to pass on.

use std::collections::HashMap;
use std::future::Future;

use rmcp::ServiceError;
use rmcp::model::{
    ErrorCode, GetPromptRequestParams, GetPromptResult, JsonObject, Prompt, ProtocolVersion,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, ServerCapabilities,
    SubscribeRequestParams, UnsubscribeRequestParams,
};

use crate::connect::describe;
use crate::registry::{Inner, Registry, Session, lock};
use crate::spec::ServerSpec;

/// Why a prompt or a resource could not be had.
#[derive(Debug, thiserror::Error)]
pub enum PassError {
    #[error("no MCP server this agent sees has a prompt named '{0}'")]
    UnknownPrompt(String),
    #[error("no MCP server this agent sees has the resource '{uri}'{}", last.as_ref().map(|l| format!(" (last answer: {l})")).unwrap_or_default())]
    UnknownResource { uri: String, last: Option<String> },
    #[error("MCP server '{server}' failed: {message}")]
    Upstream { server: String, message: String },
    #[error("no MCP server this agent sees can tell of changes to '{uri}'{}", last.as_ref().map(|l| format!(" (last answer: {l})")).unwrap_or_default())]
    NotSubscribable { uri: String, last: Option<String> },
}

/// A change an MCP server announced.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerEvent {
    /// A subscribed resource changed (`notifications/resources/updated`).
    ResourceUpdated { server: String, uri: String },
    /// `notifications/resources/list_changed`.
    ResourcesChanged { server: String },
    /// `notifications/prompts/list_changed`.
    PromptsChanged { server: String },
}

impl ServerEvent {
    /// The server that announced it.
    pub fn server(&self) -> &str {
        match self {
            Self::ResourceUpdated { server, .. }
            | Self::ResourcesChanged { server }
            | Self::PromptsChanged { server } => server,
        }
    }
}

/// Which servers a caller sees, by name.
pub type Sees<'a> = &'a (dyn Fn(&str) -> bool + Sync);

impl Registry {
    /// Every prompt of the seen servers that offer prompts, named as agents see them.
    pub async fn prompts(&self, sees: Sees<'_>) -> Vec<Prompt> {
        let listed = self
            .each(sees, has_prompts, |s| async move {
                s.peer.list_all_prompts().await
            })
            .await;
        let named = exposed_names(listed.iter().map(|(spec, p)| (spec.name.as_str(), &p.name)));
        listed
            .into_iter()
            .zip(named)
            .map(|((_, mut prompt), name)| {
                prompt.name = name;
                prompt
            })
            .collect()
    }

    /// The prompt agents know as `exposed`, from the server that has it.
    pub async fn prompt(
        &self,
        sees: Sees<'_>,
        exposed: &str,
        arguments: Option<JsonObject>,
    ) -> Result<GetPromptResult, PassError> {
        let listed = self
            .each(sees, has_prompts, |s| async move {
                s.peer.list_all_prompts().await
            })
            .await;
        let named = exposed_names(listed.iter().map(|(spec, p)| (spec.name.as_str(), &p.name)));
        let (spec, prompt) = listed
            .into_iter()
            .zip(named)
            .find_map(|(found, name)| (name == exposed).then_some(found))
            .ok_or_else(|| PassError::UnknownPrompt(exposed.to_owned()))?;
        let session = self
            .session_of(&spec.name)
            .ok_or_else(|| unavailable(&spec))?;
        let mut params = GetPromptRequestParams::new(prompt.name);
        params.arguments = arguments;
        bounded(&spec, session.peer.get_prompt(params)).await
    }

    /// Every resource of the seen servers that offer resources.
    pub async fn resources(&self, sees: Sees<'_>) -> Vec<Resource> {
        self.each(sees, has_resources, |s| async move {
            s.peer.list_all_resources().await
        })
        .await
        .into_iter()
        .map(|(_, r)| r)
        .collect()
    }

    /// Every resource template of the seen servers that offer resources.
    pub async fn resource_templates(&self, sees: Sees<'_>) -> Vec<ResourceTemplate> {
        self.each(sees, has_resources, |s| async move {
            s.peer.list_all_resource_templates().await
        })
        .await
        .into_iter()
        .map(|(_, r)| r)
        .collect()
    }

    /// The resource at `uri`, from the first seen server that has it.
    pub async fn read_resource(
        &self,
        sees: Sees<'_>,
        uri: &str,
    ) -> Result<ReadResourceResult, PassError> {
        let mut last = None;
        for (spec, session) in self.sessions(sees, has_resources) {
            let params = ReadResourceRequestParams::new(uri);
            match bounded(&spec, session.peer.read_resource(params)).await {
                Ok(result) => return Ok(result),
                Err(PassError::Upstream { server, message }) => {
                    last = Some(format!("{server}: {message}"));
                }
                Err(other) => return Err(other),
            }
        }
        Err(PassError::UnknownResource {
            uri: uri.to_owned(),
            last,
        })
    }

    /// Subscribes to the resource at `uri` on the seen server that has it and can tell of its
    /// changes, and returns that server's name; [`ServerEvent::ResourceUpdated`] then comes
    /// for it. Each call needs its own [`Registry::unsubscribe`].
    pub async fn subscribe(&self, sees: Sees<'_>, uri: &str) -> Result<String, PassError> {
        let _one_at_a_time = self.inner.subscribing.lock().await;
        let mut last = None;
        for (spec, session) in self.sessions(sees, has_subscriptions) {
            if !legacy(&session) {
                continue;
            }
            let key = (spec.name.clone(), uri.to_owned());
            if let Some(count) = lock(&self.inner.subscribed).get_mut(&key) {
                *count += 1;
                return Ok(key.0);
            }
            // The server that has the resource is the one that reads it.
            let read = ReadResourceRequestParams::new(uri);
            if let Err(e) = bounded(&spec, session.peer.read_resource(read)).await {
                last = Some(e.to_string());
                continue;
            }
            let params = SubscribeRequestParams::new(uri);
            #[expect(deprecated, reason = "servers before 2026-07-28 subscribe this way")]
            let subscribing = session.peer.subscribe(params);
            match bounded(&spec, subscribing).await {
                Ok(()) => {
                    lock(&self.inner.subscribed).insert(key, 1);
                    return Ok(spec.name);
                }
                Err(e) => last = Some(e.to_string()),
            }
        }
        Err(PassError::NotSubscribable {
            uri: uri.to_owned(),
            last,
        })
    }

    /// Takes back one [`Registry::subscribe`] of `uri` on `server`; the last one unsubscribes
    /// on the server.
    pub async fn unsubscribe(&self, server: &str, uri: &str) {
        let _one_at_a_time = self.inner.subscribing.lock().await;
        let key = (server.to_owned(), uri.to_owned());
        {
            let mut subscribed = lock(&self.inner.subscribed);
            let Some(count) = subscribed.get_mut(&key) else {
                return;
            };
            *count -= 1;
            if *count > 0 {
                return;
            }
            subscribed.remove(&key);
        }
        let Some(slot) = self.inner.slots.iter().find(|s| s.spec.name == server) else {
            return;
        };
        let Some(session) = lock(&slot.live).session.clone() else {
            return;
        };
        let params = UnsubscribeRequestParams::new(uri);
        #[expect(deprecated, reason = "servers before 2026-07-28 unsubscribe this way")]
        let unsubscribing = session.peer.unsubscribe(params);
        if let Err(e) = bounded(&slot.spec, unsubscribing).await {
            tracing::warn!(server, uri, "cannot unsubscribe: {e}");
        }
    }

    /// The ready sessions of the seen servers whose capabilities pass `offers`.
    fn sessions(
        &self,
        sees: Sees<'_>,
        offers: fn(&ServerCapabilities) -> bool,
    ) -> Vec<(ServerSpec, Session)> {
        self.inner
            .slots
            .iter()
            .filter(|slot| sees(&slot.spec.name))
            .filter_map(|slot| {
                let session = lock(&slot.live).session.clone()?;
                let info = session.peer.peer_info()?;
                offers(&info.capabilities).then(|| (slot.spec.clone(), session))
            })
            .collect()
    }

    fn session_of(&self, server: &str) -> Option<Session> {
        let slot = self.inner.slots.iter().find(|s| s.spec.name == server)?;
        lock(&slot.live).session.clone()
    }

    /// Lists `list` on every seen server at once, in registration order; a server that fails
    /// is left out.
    async fn each<T, F, Fut>(
        &self,
        sees: Sees<'_>,
        offers: fn(&ServerCapabilities) -> bool,
        list: F,
    ) -> Vec<(ServerSpec, T)>
    where
        F: Fn(Session) -> Fut,
        Fut: Future<Output = Result<Vec<T>, ServiceError>>,
    {
        let sessions = self.sessions(sees, offers);
        let lists = sessions
            .into_iter()
            .map(|(spec, session)| {
                let listing = list(session);
                async move {
                    match bounded(&spec, listing).await {
                        Ok(items) => items.into_iter().map(|i| (spec.clone(), i)).collect(),
                        Err(e) => {
                            tracing::warn!(server = spec.name, "listing left out: {e}");
                            Vec::new()
                        }
                    }
                }
            })
            .collect::<Vec<_>>();
        let mut all = Vec::new();
        for listed in futures::future::join_all(lists).await {
            all.extend(listed);
        }
        all
    }
}

fn has_prompts(capabilities: &ServerCapabilities) -> bool {
    capabilities.prompts.is_some()
}

fn has_resources(capabilities: &ServerCapabilities) -> bool {
    capabilities.resources.is_some()
}

/// Whether the session speaks a revision before 2026-07-28, where a client subscribes with
/// `resources/subscribe`. Sessions opened with `initialize`, as all of Purko's are, always do
/// (from 2026-07-28 on, a subscription is a `subscriptions/listen` stream).
fn legacy(session: &Session) -> bool {
    session
        .peer
        .peer_info()
        .is_some_and(|info| info.protocol_version < ProtocolVersion::V_2026_07_28)
}

fn has_subscriptions(capabilities: &ServerCapabilities) -> bool {
    capabilities
        .resources
        .as_ref()
        .is_some_and(|r| r.subscribe == Some(true))
}

/// The URIs subscribed on `server`.
pub(crate) fn subscribed_on(inner: &Inner, server: &str) -> Vec<String> {
    lock(&inner.subscribed)
        .keys()
        .filter(|(on, _)| on == server)
        .map(|(_, uri)| uri.clone())
        .collect()
}

/// Subscribes again on a server's new session to what was subscribed on its last one.
pub(crate) async fn resubscribe(spec: ServerSpec, session: Session, uris: Vec<String>) {
    for uri in uris {
        let params = SubscribeRequestParams::new(uri.as_str());
        #[expect(deprecated, reason = "servers before 2026-07-28 subscribe this way")]
        let subscribing = session.peer.subscribe(params);
        if let Err(e) = bounded(&spec, subscribing).await {
            tracing::warn!(server = spec.name, uri, "cannot subscribe again: {e}");
        }
    }
}

fn unavailable(spec: &ServerSpec) -> PassError {
    PassError::Upstream {
        server: spec.name.clone(),
        message: "the server is not connected right now; try again shortly".into(),
    }
}

/// `request` within the server's `tool_timeout`, its failure told without the spec's secrets.
async fn bounded<T>(
    spec: &ServerSpec,
    request: impl Future<Output = Result<T, ServiceError>>,
) -> Result<T, PassError> {
    let failed = |message: String| PassError::Upstream {
        server: spec.name.clone(),
        message: spec.redact(&message),
    };
    match tokio::time::timeout(spec.tool_timeout, request).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(ServiceError::McpError(e))) if e.code == ErrorCode::METHOD_NOT_FOUND => {
            Err(failed("the server does not offer this".into()))
        }
        Ok(Err(e)) => Err(failed(describe(&e))),
        Err(_) => Err(failed(format!(
            "no answer within {} s",
            spec.tool_timeout.as_secs_f64()
        ))),
    }
}

/// Names as agents see them: a name two servers share becomes `server/name` for both.
fn exposed_names<'a>(names: impl Iterator<Item = (&'a str, &'a String)> + Clone) -> Vec<String> {
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, name) in names.clone() {
        *count.entry(name.as_str()).or_default() += 1;
    }
    names
        .map(|(server, name)| {
            if count[name.as_str()] > 1 {
                format!("{server}/{name}")
            } else {
                name.clone()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shared_prompt_name_is_prefixed_by_its_server_for_both() {
        let a = "greet".to_owned();
        let b = "greet".to_owned();
        let c = "summarise".to_owned();
        let names = vec![("one", &a), ("two", &b), ("two", &c)];
        assert_eq!(
            exposed_names(names.into_iter()),
            vec!["one/greet", "two/greet", "summarise"]
        );
    }
}
