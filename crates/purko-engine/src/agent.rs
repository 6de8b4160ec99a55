//! One agent as the engine runs it: its guard (catalogue, kinds, rules, autonomy), the backend
//! of each tool it may call, its egress guard, the secrets that must never reach its model, and
//! how its approvals are asked.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use purko_config::{Agent, Endpoint, Tool, ToolType};
use purko_guard::{Catalogue, Guard, GuardConfig, Inference, KindsFile, Policy};
use purko_http::{ApiTool, Auth, Egress, Secret};
use purko_mcp::McpTool;
use purko_protocol::{Autonomy, ToolSpec};
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::analysis::{self, STATIC_ANALYSIS};
use crate::code::{CODE_TOOLS, CodeTool};
use crate::error::{Error, Result};

/// Where a tool runs.
#[derive(Debug)]
pub enum Backend {
    Api(Arc<ApiTool>),
    /// A tool of a registered MCP server, by the name agents see.
    Mcp,
    /// `execute_code` / `code-sandbox`: the sandbox.
    Code(Arc<CodeTool>),
    /// `static-analysis`.
    Analysis,
}

impl Backend {
    pub fn name(&self) -> &'static str {
        match self {
            Self::Api(_) => "api",
            Self::Mcp => "mcp",
            Self::Code(_) => "function",
            Self::Analysis => "builtin",
        }
    }
}

/// A tool the manifest lists that nothing can run here, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unavailable {
    /// The tool's type.
    pub backend: &'static str,
    /// What a model reads as the remediation.
    pub why: String,
}

impl Unavailable {
    fn new(backend: &'static str, why: impl Into<String>) -> Self {
        Self {
            backend,
            why: why.into(),
        }
    }
}

/// Where an approval's webhook goes.
#[derive(Clone, Debug)]
pub struct Webhook {
    pub url: String,
    pub headers: Vec<(String, String)>,
}

/// Which MCP tools an agent sees (seed 000: no `spec.tools` means every registered MCP tool).
#[derive(Clone, Debug)]
enum McpAccess {
    All,
    Listed(Vec<String>),
}

/// What an agent can call right now: rebuilt whenever a registered server's tool list changes.
#[derive(Debug)]
pub struct View {
    pub guard: Guard,
    pub backends: HashMap<String, Backend>,
    /// Tools the manifest lists that nothing can run here, and why.
    pub unavailable: HashMap<String, Unavailable>,
    /// The registered MCP servers whose prompts and resources the agent's gateway passes on.
    pub mcp_servers: McpServers,
}

/// The registered MCP servers an agent sees: every one for an agent with no `spec.tools`, else
/// those of the MCP tools it lists (in registration order).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum McpServers {
    All,
    Only(Vec<String>),
}

impl McpServers {
    pub fn contains(&self, server: &str) -> bool {
        match self {
            Self::All => true,
            Self::Only(names) => names.iter().any(|n| n == server),
        }
    }
}

/// An agent, ready to judge and run calls.
#[derive(Debug)]
pub struct AgentRuntime {
    pub key: String,
    pub egress: Egress,
    /// Values that must never appear in an observation.
    pub secrets: Vec<String>,
    pub approval_timeout: Duration,
    /// Whether a call that needs a yes waits for it unless the caller says otherwise.
    pub wait: bool,
    /// Whether an approval may be asked through the connected MCP client (elicitation).
    pub elicitation: bool,
    pub webhook: Option<Webhook>,
    pub max_output_bytes: usize,
    api_tools: Vec<(ToolSpec, Arc<ApiTool>)>,
    code_tools: Vec<(ToolSpec, Arc<CodeTool>)>,
    /// `static-analysis`, the one builtin served here.
    builtin_tools: Vec<ToolSpec>,
    mcp: McpAccess,
    /// Tools the manifest lists that nothing here serves.
    not_served: Vec<(String, Unavailable)>,
    kinds: Option<KindsFile>,
    policy: Policy,
    inference: Inference,
    autonomy: Autonomy,
    view: ArcSwap<View>,
    /// Bumped whenever the view is rebuilt.
    view_changes: watch::Sender<u64>,
}

/// The default cap on what one observation carries back to the model.
pub const MAX_OUTPUT_BYTES: usize = 100_000;

impl AgentRuntime {
    pub fn build(agent: &Agent) -> Result<Self> {
        let key = agent.key();
        let base = agent.base_dir();
        let mut api_tools = Vec::new();
        let mut code_tools = Vec::new();
        let mut builtin_tools = Vec::new();
        let mut listed_mcp = Vec::new();
        let mut not_served = Vec::new();
        let mut secrets = Vec::new();
        for tool in agent.spec.tools.iter().flatten() {
            match (tool.tool_type, &tool.endpoint) {
                (ToolType::Api, Some(endpoint)) => {
                    let api = api_tool(tool, endpoint, base, &mut secrets)?;
                    api_tools.push((api_spec(tool, endpoint), Arc::new(api)));
                }
                (ToolType::Mcp, _) => listed_mcp.push(tool.name.clone()),
                (ToolType::Function, _) if CODE_TOOLS.contains(&tool.name.as_str()) => {
                    match agent.spec.runtime.code_execution.as_ref() {
                        Some(config) if config.enabled => {
                            let code = Arc::new(CodeTool::new(config.clone()));
                            let spec = code.spec(&tool.name, tool.description.as_deref());
                            code_tools.push((spec, code));
                        }
                        _ => not_served.push((
                            tool.name.clone(),
                            Unavailable::new(
                                "function",
                                format!(
                                    "code execution is off for this agent (the operator turns it on with spec.runtime.codeExecution.enabled); do not call {} again",
                                    tool.name
                                ),
                            ),
                        )),
                    }
                }
                (ToolType::Builtin, _) if tool.name == STATIC_ANALYSIS => {
                    builtin_tools.push(analysis::spec(&tool.name, tool.description.as_deref()));
                }
                (other, _) => not_served.push((
                    tool.name.clone(),
                    Unavailable::new(
                        other.as_str(),
                        format!(
                            "{} is a '{}' tool, which this Purko does not serve yet; use another tool",
                            tool.name,
                            other.as_str()
                        ),
                    ),
                )),
            }
        }
        let mcp = if agent.spec.tools.is_none() {
            McpAccess::All
        } else {
            McpAccess::Listed(listed_mcp)
        };
        let kinds = agent
            .tool_kinds_path()
            .map(|path| KindsFile::load(&path))
            .transpose()?;
        let inference = if agent.infer() {
            Inference::On
        } else {
            Inference::Off
        };
        let policy = Policy::compile(agent.policy(), &agent.source)?;
        let admitted = &agent.policy().destinations.allow;
        let egress = Egress::new(admitted).map_err(|e| Error::Agent {
            source_file: agent.source.clone(),
            agent: key.clone(),
            message: e.to_string(),
            hint: "write destinations.allow entries as host names, URLs or e-mail addresses".into(),
        })?;
        let approvals = agent.spec.guardrail.as_ref().map(|g| &g.approvals);
        let webhook = approvals.and_then(|a| a.webhook.as_ref()).map(|w| Webhook {
            url: w.url.clone(),
            headers: w
                .headers
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect(),
        });
        let runtime = Self {
            key,
            egress,
            secrets,
            approval_timeout: agent.approval_timeout(),
            wait: approvals.is_none_or(|a| a.wait),
            elicitation: approvals.is_none_or(|a| a.elicitation),
            webhook,
            max_output_bytes: MAX_OUTPUT_BYTES,
            api_tools,
            code_tools,
            builtin_tools,
            mcp,
            not_served,
            kinds,
            policy,
            inference,
            autonomy: agent.spec.autonomy_level,
            view: ArcSwap::from_pointee(View {
                guard: Guard::new(GuardConfig {
                    catalogue: Catalogue::default(),
                    kinds: None,
                    inference: Inference::Off,
                    policy: Policy::default(),
                    autonomy: Autonomy::Manual,
                }),
                backends: HashMap::new(),
                unavailable: HashMap::new(),
                mcp_servers: McpServers::Only(Vec::new()),
            }),
            view_changes: watch::channel(0).0,
        };
        runtime.rebuild(&[])?;
        Ok(runtime)
    }

    /// What the agent can call now.
    pub fn view(&self) -> Arc<View> {
        self.view.load_full()
    }

    /// Bumped whenever the view changes (an upstream's tools changed).
    pub fn view_changes(&self) -> watch::Receiver<u64> {
        self.view_changes.subscribe()
    }

    /// Rebuilds the view with the registered servers' current tools.
    pub fn rebuild(&self, mcp_tools: &[McpTool]) -> Result<()> {
        let mut specs: Vec<ToolSpec> = Vec::new();
        let mut backends = HashMap::new();
        let mut unavailable: HashMap<String, Unavailable> =
            self.not_served.iter().cloned().collect();
        for (spec, api) in &self.api_tools {
            specs.push(spec.clone());
            backends.insert(spec.name.clone(), Backend::Api(Arc::clone(api)));
        }
        for (spec, code) in &self.code_tools {
            specs.push(spec.clone());
            backends.insert(spec.name.clone(), Backend::Code(Arc::clone(code)));
        }
        for spec in &self.builtin_tools {
            specs.push(spec.clone());
            backends.insert(spec.name.clone(), Backend::Analysis);
        }
        let listed = match &self.mcp {
            McpAccess::All => None,
            McpAccess::Listed(names) => Some(names),
        };
        let mut servers: Vec<String> = Vec::new();
        for tool in mcp_tools {
            let visible = listed.is_none_or(|names| names.contains(&tool.exposed));
            if visible && !backends.contains_key(&tool.exposed) {
                specs.push(tool.spec.clone());
                backends.insert(tool.exposed.clone(), Backend::Mcp);
                if !servers.contains(&tool.server) {
                    servers.push(tool.server.clone());
                }
            }
        }
        let mcp_servers = match listed {
            None => McpServers::All,
            Some(_) => McpServers::Only(servers),
        };
        for name in listed.into_iter().flatten() {
            if !backends.contains_key(name) {
                unavailable.insert(
                    name.clone(),
                    Unavailable::new(
                        "mcp",
                        format!(
                            "no registered MCP server offers {name} right now; use another tool"
                        ),
                    ),
                );
            }
        }
        let catalogue = Catalogue::new(specs).map_err(|message| Error::Agent {
            source_file: std::path::PathBuf::new(),
            agent: self.key.clone(),
            message,
            hint: "give every tool of the agent its own name".into(),
        })?;
        let guard = Guard::new(GuardConfig {
            catalogue,
            kinds: self.kinds.clone(),
            inference: self.inference,
            policy: self.policy.clone(),
            autonomy: self.autonomy,
        });
        self.view.store(Arc::new(View {
            guard,
            backends,
            unavailable,
            mcp_servers,
        }));
        self.view_changes.send_modify(|n| *n = n.wrapping_add(1));
        Ok(())
    }

    /// Whether the agent may see MCP tools at all.
    pub fn uses_mcp(&self) -> bool {
        match &self.mcp {
            McpAccess::All => true,
            McpAccess::Listed(names) => !names.is_empty(),
        }
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
    agent.view().tool_views()
}

impl View {
    /// The tools of this view an agent can see, with kind, source and reason: what
    /// `GET /api/tools` and the MCP gateway list.
    pub fn tool_views(&self) -> Vec<Value> {
        let view = self;
        view.guard
            .catalogue()
            .tools()
            .iter()
            .filter(|t| view.guard.could_call(&t.name))
            .filter_map(|t| {
                let c = view.guard.classification(&t.name)?;
                Some(json!({
                    "name": t.name,
                    "description": t.description,
                    "inputSchema": t.input_schema,
                    "backend": view.backends.get(&t.name).map(Backend::name),
                    "kind": c.kind,
                    "kind_source": c.source,
                    "kind_reason": c.reason,
                }))
            })
            .collect()
    }
}
