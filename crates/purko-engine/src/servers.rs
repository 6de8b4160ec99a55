//! The MCP servers of the manifests, as the engine runs them: their specs for the registry
//! (secrets resolved, never logged), agents' views rebuilt when a server's tool list changes,
//! and the listing of `GET /api/mcp/tools`.

use std::sync::Arc;
use std::time::Duration;

use purko_config::{self as config, Manifests};
use purko_guard::{DestinationMap, Inference, classify};
use purko_mcp::{Registry, ServerSpec, Transport};
use serde_json::{Value, json};

use crate::agent::{AgentRuntime, View};
use crate::error::Result;

/// The registry's specs and the secret values they carry.
pub struct Servers {
    pub specs: Vec<ServerSpec>,
    /// Values that must never reach a model: env and header secrets of the servers.
    pub secrets: Vec<String>,
}

impl Servers {
    /// How long start-up waits for the slowest server's first tool list.
    pub fn startup_timeout(&self) -> Duration {
        self.specs
            .iter()
            .map(|s| s.startup_timeout)
            .max()
            .unwrap_or(Duration::ZERO)
    }
}

/// Rebuilds the agents' views whenever a server's tools or state change.
pub fn follow(registry: &Registry, agents: Vec<Arc<AgentRuntime>>) {
    let mut changes = registry.changes();
    let registry = registry.clone();
    tokio::spawn(async move {
        while changes.changed().await.is_ok() {
            let tools = registry.tools();
            for agent in agents.iter().filter(|a| a.uses_mcp()) {
                if let Err(e) = agent.rebuild(&tools) {
                    tracing::warn!(agent = %agent.key, "cannot take the new MCP tool list: {e}");
                }
            }
        }
    });
}

/// Every server with its status, and its tools with kind, source and reason.
pub fn listing(registry: &Registry, view: Option<&View>) -> Value {
    let tools = registry.tools();
    let servers: Vec<Value> = registry
        .servers()
        .into_iter()
        .map(|status| {
            let listed: Vec<Value> = tools
                .iter()
                .filter(|t| t.server == status.name)
                .map(|t| {
                    let classification = match view.and_then(|v| v.guard.classification(&t.exposed))
                    {
                        Some(c) => c.clone(),
                        None => classify(
                            &t.spec,
                            None,
                            Inference::On,
                            &DestinationMap::from_schema(t.spec.input_schema.as_ref()),
                        ),
                    };
                    json!({
                        "name": t.exposed,
                        "upstream_name": t.upstream,
                        "description": t.spec.description,
                        "kind": classification.kind,
                        "kind_source": classification.source,
                        "kind_reason": classification.reason,
                    })
                })
                .collect();
            json!({
                "name": status.name,
                "status": status,
                "tools": listed,
            })
        })
        .collect();
    json!({ "servers": servers })
}

/// The registry's specs from the manifests' `MCPServer`s. Secret values are resolved here and
/// remembered, so that no observation ever carries one back.
pub fn specs(manifests: &Manifests) -> Result<Servers> {
    let mut specs = Vec::new();
    let mut secrets = Vec::new();
    for server in &manifests.mcp_servers {
        let transport = match &server.spec.transport {
            config::Transport::Stdio(stdio) => {
                let env = server.resolve_env()?;
                secrets.extend(secret_values(&stdio.env, &env));
                Transport::Stdio {
                    command: stdio.command.clone(),
                    args: stdio.args.clone(),
                    env,
                    cwd: server.cwd(),
                }
            }
            config::Transport::Http(http) => {
                let headers = server.resolve_headers()?;
                secrets.extend(secret_values(&http.headers, &headers));
                Transport::Http {
                    url: http.url.clone(),
                    headers,
                }
            }
        };
        specs.push(ServerSpec {
            name: server.metadata.name.clone(),
            transport,
            tool_timeout: server.tool_timeout(),
            startup_timeout: server.startup_timeout(),
            catalogue: server
                .spec
                .catalogue
                .iter()
                .map(|(tool, marks)| (tool.clone(), *marks))
                .collect(),
        });
    }
    Ok(Servers { specs, secrets })
}

/// The resolved values of the entries written as secret references.
fn secret_values(
    written: &indexmap::IndexMap<String, config::Value>,
    resolved: &[(String, String)],
) -> Vec<String> {
    resolved
        .iter()
        .filter(|(name, _)| matches!(written.get(name), Some(config::Value::Secret(_))))
        .map(|(_, value)| value.clone())
        .filter(|value| !value.is_empty())
        .collect()
}
