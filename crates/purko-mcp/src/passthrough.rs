//! Prompts and resources of the registered servers, passed on to a gateway's client for the
//! servers its agent sees.
//!
//! They run nothing on the server's side, so they are not judged like tool calls. A prompt's
//! name is prefixed `server/` where two seen servers share it, as tool names are; a resource
//! keeps its URI, and reading one asks the seen servers in turn until one has it (seed 000's
//! "try every client"). Every request is bounded by the server's `tool_timeout`; a server that
//! fails a listing is left out of it (and logged), never failing the others.

use std::collections::HashMap;
use std::future::Future;

use rmcp::ServiceError;
use rmcp::model::{
    ErrorCode, GetPromptRequestParams, GetPromptResult, JsonObject, Prompt,
    ReadResourceRequestParams, ReadResourceResult, Resource, ResourceTemplate, ServerCapabilities,
};

use crate::connect::describe;
use crate::registry::{Registry, Session, lock};
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
