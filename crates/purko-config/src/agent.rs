//! `kind: Agent`: the shape of seed 000 (model, autonomy level, runtime, tools) plus
//! `spec.guardrail`. These types are what a manifest says once it has been checked; the checks
//! themselves live in `validate`.

use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use purko_analysis::CheckList;
use purko_guard::{RawDestinations, RawPolicy, RawRule};
use purko_protocol::Autonomy;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// One agent, as loaded from its manifest.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Agent {
    /// The manifest file it came from.
    pub source: PathBuf,
    /// Its document in that file, from 1.
    pub document: usize,
    pub api_version: String,
    pub metadata: Metadata,
    pub spec: AgentSpec,
}

impl Agent {
    /// `namespace/name`, unique across everything loaded together.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }

    /// The folder relative paths in the manifest are resolved against.
    pub fn base_dir(&self) -> &Path {
        match self.source.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        }
    }

    /// `spec.guardrail.toolKinds`, resolved against the manifest's folder.
    pub fn tool_kinds_path(&self) -> Option<PathBuf> {
        let guardrail = self.spec.guardrail.as_ref()?;
        guardrail
            .tool_kinds
            .as_ref()
            .map(|path| self.base_dir().join(path))
    }

    /// Whether tool kinds are inferred for tools that `tool_kinds.yaml` does not name.
    pub fn infer(&self) -> bool {
        self.spec.guardrail.as_ref().is_none_or(|g| g.infer)
    }

    /// The rules and destination allow list of `spec.guardrail`, empty when there is none.
    pub fn policy(&self) -> RawPolicy {
        self.spec
            .guardrail
            .as_ref()
            .map(|g| RawPolicy {
                rules: g.rules.clone(),
                destinations: g.destinations.clone(),
            })
            .unwrap_or_default()
    }

    /// How long an approval waits for an answer: `spec.guardrail.approvals.timeoutSeconds`,
    /// 10 minutes unless set.
    pub fn approval_timeout(&self) -> Duration {
        let seconds = self
            .spec
            .guardrail
            .as_ref()
            .map_or(DEFAULT_APPROVAL_SECONDS, |g| g.approvals.timeout_seconds);
        Duration::from_secs(seconds)
    }

    /// The agent's tool of that name, when `spec.tools` lists it.
    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.spec.tools.as_deref()?.iter().find(|t| t.name == name)
    }
}

/// `metadata`: names and free-form labels.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Metadata {
    /// DNS-label-like: lower-case letters, digits and '-', at most 63 characters.
    #[schemars(extend("pattern" = NAME_PATTERN, "maxLength" = 63))]
    pub name: String,
    /// DNS-label-like, like the name; `default` unless set.
    #[serde(default = "default_namespace")]
    #[schemars(extend("pattern" = NAME_PATTERN, "maxLength" = 63))]
    pub namespace: String,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub labels: IndexMap<String, String>,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub annotations: IndexMap<String, String>,
}

pub(crate) const NAME_PATTERN: &str = "^[a-z0-9]([-a-z0-9]*[a-z0-9])?$";
const DEFAULT_APPROVAL_SECONDS: u64 = 600;

fn default_namespace() -> String {
    "default".into()
}

/// `spec` of an Agent.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct AgentSpec {
    /// `executor` unless set.
    #[serde(default, rename = "type")]
    pub agent_type: AgentType,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<Model>,
    /// `supervised` unless set.
    #[serde(default = "default_autonomy")]
    pub autonomy_level: Autonomy,
    #[serde(default)]
    pub runtime: Runtime,
    /// The tools the agent may call. Absent means every tool of every registered MCP server; an
    /// empty list means none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guardrail: Option<Guardrail>,
}

fn default_autonomy() -> Autonomy {
    Autonomy::Supervised
}

/// What the agent is for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum AgentType {
    /// Calls tools.
    #[default]
    Executor,
    /// Decides what to do next, for example which workflow to start.
    Planner,
}

/// `spec.model`: which language model drives the agent. Purko never calls it itself.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Model {
    pub provider: String,
    pub name: String,
}

/// `spec.runtime`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Runtime {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code_execution: Option<CodeExecution>,
}

/// `spec.runtime.codeExecution`: the sandbox behind `function` tools. Off unless enabled.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct CodeExecution {
    #[serde(default)]
    pub enabled: bool,
    /// python and bash unless set.
    #[serde(default = "all_languages")]
    pub languages: Vec<Language>,
    #[serde(default)]
    pub sandbox: Sandbox,
    /// What the pre-execution check refuses, per language: a list replaces the default
    /// (`bash: [curl, wget]`), `{extend: [...], remove: [...]}` changes it
    /// (`python: {extend: [requests], remove: [shutil]}`). Entries are dotted python paths
    /// (`os.system`, `subprocess`, `os.exec*`) or bash command names, each a string or
    /// `{api, why}`. The defaults are in `purko analyze --help` and purko-analysis's README.
    #[serde(default)]
    #[schemars(with = "Option<serde_json::Map<String, serde_json::Value>>")]
    pub check: CheckList,
}

fn all_languages() -> Vec<Language> {
    vec![Language::Python, Language::Bash]
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum Language {
    Python,
    Bash,
}

impl Language {
    /// The language as manifests and tool arguments spell it.
    pub fn as_str(self) -> &'static str {
        match self {
            Language::Python => "python",
            Language::Bash => "bash",
        }
    }

    /// The language as tool arguments spell it, if it is one.
    pub fn parse(word: &str) -> Option<Language> {
        match word {
            "python" => Some(Language::Python),
            "bash" => Some(Language::Bash),
            _ => None,
        }
    }
}

impl From<Language> for purko_analysis::CodeLanguage {
    fn from(language: Language) -> Self {
        match language {
            Language::Python => purko_analysis::CodeLanguage::Python,
            Language::Bash => purko_analysis::CodeLanguage::Bash,
        }
    }
}

/// `spec.runtime.codeExecution.sandbox`: limits of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Sandbox {
    /// 30 unless set; more than 0.
    #[serde(default = "default_execution_seconds")]
    #[schemars(range(min = 1))]
    pub max_execution_seconds: u64,
    /// 100000 unless set; more than 0.
    #[serde(default = "default_output_bytes")]
    #[schemars(range(min = 1))]
    pub max_output_bytes: u64,
    #[serde(default)]
    pub network_access: bool,
    #[serde(default)]
    pub writable_paths: Vec<PathBuf>,
    /// Run where the kernel lacks Landlock or seccomp, with the remaining layers (the operator's
    /// explicit choice; the missing layers are logged at each run). Without it such a kernel
    /// refuses every run. User namespaces are never optional.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub accept_weaker: bool,
}

impl Default for Sandbox {
    fn default() -> Self {
        Self {
            max_execution_seconds: default_execution_seconds(),
            max_output_bytes: default_output_bytes(),
            network_access: false,
            writable_paths: Vec::new(),
            accept_weaker: false,
        }
    }
}

fn default_execution_seconds() -> u64 {
    30
}

fn default_output_bytes() -> u64 {
    100_000
}

/// One entry of `spec.tools`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Tool {
    /// Unique within the agent.
    pub name: String,
    #[serde(rename = "type")]
    pub tool_type: ToolType,
    /// What the tool does, for the model and for kind inference; `api` tools only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; `api` tools only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Option<serde_json::Map<String, Value>>")]
    pub input_schema: Option<Value>,
    /// Required for `api` tools, refused for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub endpoint: Option<Endpoint>,
}

/// Which backend runs a tool (DESIGN.md section 7).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ToolType {
    /// A tool of a registered MCP server.
    Mcp,
    /// Code run in the sandbox (`execute_code`, `code-sandbox`, `vector-search`).
    Function,
    /// A direct HTTP call to `endpoint`.
    Api,
    /// A handler inside Purko (`static-analysis`, `trigger-workflow`).
    Builtin,
}

impl ToolType {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Mcp => "mcp",
            Self::Function => "function",
            Self::Api => "api",
            Self::Builtin => "builtin",
        }
    }
}

impl fmt::Display for ToolType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The `EndpointSpec` of an `api` tool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Endpoint {
    /// An http or https URL.
    pub url: String,
    pub method: Method,
    /// Static headers sent with every request.
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub headers: IndexMap<String, String>,
    /// 30 unless set; more than 0.
    #[serde(default = "default_timeout_seconds")]
    #[schemars(range(min = 1))]
    pub timeout_seconds: u64,
    /// How the secret is sent; needs `secretRef`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_scheme: Option<AuthScheme>,
    /// The header that carries the secret; `Authorization` unless set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub auth_header: Option<String>,
    /// Where the secret comes from; needs `authScheme`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret_ref: Option<SecretRef>,
}

fn default_timeout_seconds() -> u64 {
    30
}

impl Endpoint {
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_seconds)
    }

    /// The header that carries the secret.
    pub fn auth_header(&self) -> &str {
        self.auth_header.as_deref().unwrap_or("Authorization")
    }
}

pub use purko_protocol::{AuthScheme, HttpMethod as Method};

/// Where a secret comes from; never from the model, never written into a manifest. Written
/// `{env: NAME}` or `{file: path}`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum SecretRef {
    /// An environment variable of the Purko process.
    Env(String),
    /// A file, relative to the manifest's folder.
    File(PathBuf),
}

// By hand: yaml_serde reads externally tagged enums only from YAML tags (`!env NAME`), and the
// manifest shape is a one-key mapping. Errors raised in `visit_map` carry the mapping's place.
impl<'de> Deserialize<'de> for SecretRef {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct SecretVisitor;

        impl<'de> serde::de::Visitor<'de> for SecretVisitor {
            type Value = SecretRef;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("{env: NAME} or {file: path}")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<SecretRef, A::Error> {
                use serde::de::Error as _;
                let mut found = None;
                while let Some(key) = map.next_key::<String>()? {
                    let secret = match key.as_str() {
                        "env" => SecretRef::Env(map.next_value()?),
                        "file" => SecretRef::File(map.next_value()?),
                        other => return Err(A::Error::unknown_field(other, &["env", "file"])),
                    };
                    if found.replace(secret).is_some() {
                        return Err(A::Error::custom("give either env or file, not both"));
                    }
                }
                found.ok_or_else(|| A::Error::custom("name the secret's env or file"))
            }
        }

        deserializer.deserialize_map(SecretVisitor)
    }
}

/// `spec.guardrail` (DESIGN.md section 4).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Guardrail {
    /// `tool_kinds.yaml`, relative to the manifest's folder.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_kinds: Option<PathBuf>,
    /// Infer the kind of tools the kinds file does not name; true unless set.
    #[serde(default = "yes")]
    pub infer: bool,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<RawRule>,
    #[serde(default)]
    pub destinations: RawDestinations,
    #[serde(default)]
    pub approvals: Approvals,
}

fn yes() -> bool {
    true
}

/// `spec.guardrail.approvals` (DESIGN.md section 6).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Approvals {
    /// How long an approval waits for an answer; 600 unless set; more than 0.
    #[serde(default = "default_approval_seconds")]
    #[schemars(range(min = 1))]
    pub timeout_seconds: u64,
    /// Ask through MCP elicitation on the connected client; true unless set. Turn it off where
    /// the client is not a person's app.
    #[serde(default = "yes")]
    pub elicitation: bool,
    /// Hold the call until the answer comes; false answers `pending` at once. True unless set.
    #[serde(default = "yes")]
    pub wait: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub webhook: Option<Webhook>,
}

impl Default for Approvals {
    fn default() -> Self {
        Self {
            timeout_seconds: DEFAULT_APPROVAL_SECONDS,
            elicitation: true,
            wait: true,
            webhook: None,
        }
    }
}

fn default_approval_seconds() -> u64 {
    DEFAULT_APPROVAL_SECONDS
}

/// Where new approvals are announced.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
pub struct Webhook {
    /// An http or https URL.
    pub url: String,
    #[serde(default, skip_serializing_if = "IndexMap::is_empty")]
    pub headers: IndexMap<String, String>,
}

/// A whole `kind: Agent` document, as written.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "Agent", title = "Agent")]
pub(crate) struct AgentDocument {
    #[schemars(extend("const" = crate::parse::API_VERSION))]
    pub api_version: String,
    #[schemars(extend("const" = "Agent"))]
    #[expect(
        dead_code,
        reason = "read with the document's head; a field here so deny_unknown_fields accepts it"
    )]
    pub kind: String,
    pub metadata: Metadata,
    pub spec: AgentSpec,
}
