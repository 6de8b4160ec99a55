//! One agent as the engine runs it: its guard (catalogue, kinds, rules, autonomy), the backend
//! of each tool it may call, its egress guard, the secrets that must never reach its model, and
//! how its approvals are asked.

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use purko_config::{Agent, Endpoint, Tool, ToolType};
use purko_guard::{Catalogue, Guard, GuardConfig, Inference, KindsFile, Policy};
use purko_http::{ApiTool, Auth, Egress, Secret};
use purko_protocol::ToolSpec;
use serde_json::{Value, json};

use crate::error::{Error, Result};

/// Where a tool runs.
#[derive(Debug)]
pub enum Backend {
    Api(ApiTool),
}

impl Backend {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Api(_) => "api",
        }
    }
}

/// Where an approval's webhook goes.
#[derive(Clone, Debug)]
pub struct Webhook {
    pub url: String,
    pub headers: Vec<(String, String)>,
}

/// An agent, ready to judge and run calls.
#[derive(Debug)]
pub struct AgentRuntime {
    pub key: String,
    pub guard: Guard,
    pub backends: HashMap<String, Backend>,
    /// Tools the manifest lists whose backend this build cannot run yet, with their type.
    pub unavailable: HashMap<String, &'static str>,
    pub egress: Egress,
    /// Values that must never appear in an observation.
    pub secrets: Vec<String>,
    pub approval_timeout: Duration,
    /// Whether a call that needs a yes waits for it unless the caller says otherwise.
    pub wait: bool,
    pub webhook: Option<Webhook>,
    pub max_output_bytes: usize,
}

/// The default cap on what one observation carries back to the model.
pub const MAX_OUTPUT_BYTES: usize = 100_000;

impl AgentRuntime {
    pub fn build(agent: &Agent) -> Result<Self> {
        let key = agent.key();
        let fail = |message: String, hint: &str| Error::Agent {
            source_file: agent.source.clone(),
            agent: key.clone(),
            message,
            hint: hint.to_owned(),
        };
        let base = agent.base_dir();
        let mut specs = Vec::new();
        let mut backends = HashMap::new();
        let mut unavailable = HashMap::new();
        let mut secrets = Vec::new();
        for tool in agent.spec.tools.iter().flatten() {
            match (tool.tool_type, &tool.endpoint) {
                (ToolType::Api, Some(endpoint)) => {
                    let api = api_tool(tool, endpoint, base, &mut secrets)?;
                    specs.push(api_spec(tool, endpoint));
                    backends.insert(tool.name.clone(), Backend::Api(api));
                }
                (other, _) => {
                    unavailable.insert(tool.name.clone(), other.as_str());
                }
            }
        }
        let catalogue = Catalogue::new(specs)
            .map_err(|e| fail(e, "give every tool of the agent its own name in spec.tools"))?;
        let kinds = agent
            .tool_kinds_path()
            .map(|path| KindsFile::load(&path))
            .transpose()?;
        let guardrail = agent.spec.guardrail.as_ref();
        let inference = if agent.infer() {
            Inference::On
        } else {
            Inference::Off
        };
        let policy = Policy::compile(agent.policy(), &agent.source)?;
        let admitted = &agent.policy().destinations.allow;
        let egress = Egress::new(admitted).map_err(|e| {
            fail(
                e.to_string(),
                "write destinations.allow entries as host names, URLs or e-mail addresses",
            )
        })?;
        let approvals = guardrail.map(|g| &g.approvals);
        let webhook = approvals.and_then(|a| a.webhook.as_ref()).map(|w| Webhook {
            url: w.url.clone(),
            headers: w
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        });
        Ok(Self {
            guard: Guard::new(GuardConfig {
                catalogue,
                kinds,
                inference,
                policy,
                autonomy: agent.spec.autonomy_level,
            }),
            key,
            backends,
            unavailable,
            egress,
            secrets,
            approval_timeout: agent.approval_timeout(),
            wait: approvals.is_none_or(|a| a.wait),
            webhook,
            max_output_bytes: MAX_OUTPUT_BYTES,
        })
    }
}

fn api_spec(tool: &Tool, endpoint: &Endpoint) -> ToolSpec {
    let mut spec = ToolSpec::new(
        tool.name.clone(),
        tool.description.clone().unwrap_or_default(),
    );
    spec.input_schema = Some(
        tool.input_schema
            .clone()
            .unwrap_or_else(|| json!({"type": "object"})),
    );
    spec.http_method = Some(endpoint.method.as_str().to_owned());
    spec
}

fn api_tool(
    tool: &Tool,
    endpoint: &Endpoint,
    base: &Path,
    secrets: &mut Vec<String>,
) -> Result<ApiTool> {
    let auth = match (&endpoint.auth_scheme, &endpoint.secret_ref) {
        (Some(scheme), Some(secret)) => {
            let value = secret.resolve(base)?;
            secrets.push(value.clone());
            Some(Auth {
                scheme: *scheme,
                header: endpoint.auth_header.clone(),
                credential: Secret::new(value),
            })
        }
        _ => None,
    };
    Ok(ApiTool {
        name: tool.name.clone(),
        url: endpoint.url.clone(),
        method: endpoint.method,
        headers: endpoint
            .headers
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect(),
        timeout: endpoint.timeout(),
        auth,
    })
}

/// The tools an agent can see, as `GET /api/tools` lists them.
pub fn tool_views(agent: &AgentRuntime) -> Vec<Value> {
    agent
        .guard
        .catalogue()
        .tools()
        .iter()
        .filter(|t| agent.guard.could_call(&t.name))
        .filter_map(|t| {
            let c = agent.guard.classification(&t.name)?;
            Some(json!({
                "name": t.name,
                "description": t.description,
                "inputSchema": t.input_schema,
                "backend": agent.backends.get(&t.name).map(Backend::name),
                "kind": c.kind,
                "kind_source": c.source,
                "kind_reason": c.reason,
            }))
        })
        .collect()
}
