//! `kind: MCPServer`: an MCP server Purko starts (stdio) or connects to (streamable HTTP), its
//! timeouts, and the trusted marks of its tools (`catalogue:`). The document is read flat, as
//! written (`McpServerDocument`), checked in `validate`, and then turned into `McpServer`, whose
//! transport is an enum so that a stdio server cannot carry a url.

use std::borrow::Cow;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use indexmap::IndexMap;
use purko_protocol::Marks;
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::agent::{Metadata, SecretRef};
use crate::error::Result;

/// One MCP server, as loaded from its manifest.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServer {
    /// The manifest file it came from.
    pub source: PathBuf,
    /// Its document in that file, from 1.
    pub document: usize,
    pub api_version: String,
    /// `metadata.name` is also the prefix of its tools' names when they collide with another
    /// server's (`server/tool`).
    pub metadata: Metadata,
    pub spec: McpServerSpec,
}

impl McpServer {
    /// `namespace/name`, unique among MCP servers across everything loaded together.
    pub fn key(&self) -> String {
        format!("{}/{}", self.metadata.namespace, self.metadata.name)
    }

    /// The folder relative paths in the manifest (`cwd`, secret files) are resolved against.
    pub fn base_dir(&self) -> &Path {
        match self.source.parent() {
            Some(parent) if !parent.as_os_str().is_empty() => parent,
            _ => Path::new("."),
        }
    }

    /// How long one `tools/call` may take.
    pub fn tool_timeout(&self) -> Duration {
        Duration::from_secs(self.spec.tool_timeout_seconds)
    }

    /// How long starting (or connecting to) the server and its `initialize` may take.
    pub fn startup_timeout(&self) -> Duration {
        Duration::from_secs(self.spec.startup_timeout_seconds)
    }

    /// The working folder of a stdio server, resolved against the manifest's folder; `None` for
    /// an http server or when `cwd` is not set.
    pub fn cwd(&self) -> Option<PathBuf> {
        match &self.spec.transport {
            Transport::Stdio(stdio) => stdio.cwd.as_ref().map(|cwd| self.base_dir().join(cwd)),
            Transport::Http(_) => None,
        }
    }

    /// The environment of a stdio server with its secrets read, in the manifest's order; empty
    /// for an http server.
    pub fn resolve_env(&self) -> Result<Vec<(String, String)>> {
        match &self.spec.transport {
            Transport::Stdio(stdio) => resolve_all(&stdio.env, self.base_dir()),
            Transport::Http(_) => Ok(Vec::new()),
        }
    }

    /// The headers of an http server with their secrets read, in the manifest's order; empty
    /// for a stdio server.
    pub fn resolve_headers(&self) -> Result<Vec<(String, String)>> {
        match &self.spec.transport {
            Transport::Http(http) => resolve_all(&http.headers, self.base_dir()),
            Transport::Stdio(_) => Ok(Vec::new()),
        }
    }

    /// The catalogue's marks for the upstream tool `tool`; empty marks when it names none.
    pub fn marks(&self, tool: &str) -> Marks {
        self.spec.catalogue.get(tool).copied().unwrap_or_default()
    }
}

fn resolve_all(values: &IndexMap<String, Value>, base: &Path) -> Result<Vec<(String, String)>> {
    values
        .iter()
        .map(|(name, value)| Ok((name.clone(), value.resolve(base)?)))
        .collect()
}

/// `spec` of an `MCPServer`, once checked.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpServerSpec {
    #[serde(flatten)]
    pub transport: Transport,
    /// 60 unless set; more than 0.
    pub tool_timeout_seconds: u64,
    /// 30 unless set; more than 0.
    pub startup_timeout_seconds: u64,
    /// Trusted marks per upstream tool name, in the manifest's order.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub catalogue: IndexMap<String, Marks>,
}

/// How Purko reaches the server.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "transport", rename_all = "lowercase")]
pub enum Transport {
    /// A child process spoken to over its stdin and stdout.
    Stdio(StdioTransport),
    /// A streamable HTTP endpoint.
    Http(HttpTransport),
}

impl Transport {
    pub fn kind(&self) -> TransportKind {
        match self {
            Self::Stdio(_) => TransportKind::Stdio,
            Self::Http(_) => TransportKind::Http,
        }
    }
}

/// `transport: stdio`.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StdioTransport {
    /// The program, looked up on `PATH` when it has no `/`.
    pub command: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Variables added to the environment the server inherits.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub env: IndexMap<String, Value>,
    /// As written; `McpServer::cwd` resolves it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
}

/// `transport: http` (streamable HTTP).
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpTransport {
    /// An http or https URL: the server's MCP endpoint.
    pub url: String,
    /// Sent with every request.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub headers: IndexMap<String, Value>,
}

/// The value of `spec.transport`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum TransportKind {
    /// A child process spoken to over its stdin and stdout: `command`, `args`, `env`, `cwd`.
    Stdio,
    /// A streamable HTTP endpoint: `url`, `headers`.
    Http,
}

impl TransportKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stdio => "stdio",
            Self::Http => "http",
        }
    }
}

impl fmt::Display for TransportKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The value of an environment variable or a header: written in the manifest, or read from a
/// secret when needed (`{secretRef: {env: NAME}}`, `{secretRef: {file: path}}`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Value {
    Plain(String),
    Secret(SecretRef),
}

impl Value {
    /// The value: the plain text, or the secret read now (`base` is the manifest's folder).
    /// Errors name the variable or file, never a secret's value.
    pub fn resolve(&self, base: &Path) -> Result<String> {
        match self {
            Self::Plain(text) => Ok(text.clone()),
            Self::Secret(secret) => secret.resolve(base),
        }
    }
}

impl Serialize for Value {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Plain(text) => serializer.serialize_str(text),
            Self::Secret(secret) => {
                let mut map = serializer.serialize_map(Some(1))?;
                map.serialize_entry("secretRef", secret)?;
                map.end()
            }
        }
    }
}

// By hand, for errors that say which forms are accepted, at the value's place. Numbers and
// booleans are refused rather than turned into text, so `0755` or `yes` never change silently.
impl<'de> Deserialize<'de> for Value {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct ValueVisitor;

        impl<'de> serde::de::Visitor<'de> for ValueVisitor {
            type Value = Value;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string (quote numbers and booleans) or {secretRef: {env: NAME}} or {secretRef: {file: path}}")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Value, E> {
                Ok(Value::Plain(text.to_owned()))
            }

            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Value, E> {
                Ok(Value::Plain(text))
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<Value, A::Error> {
                use serde::de::Error as _;
                let mut found = None;
                while let Some(key) = map.next_key::<String>()? {
                    if key != "secretRef" {
                        return Err(A::Error::unknown_field(&key, &["secretRef"]));
                    }
                    if found.replace(map.next_value::<SecretRef>()?).is_some() {
                        return Err(A::Error::duplicate_field("secretRef"));
                    }
                }
                found
                    .map(Value::Secret)
                    .ok_or_else(|| A::Error::missing_field("secretRef"))
            }
        }

        deserializer.deserialize_any(ValueVisitor)
    }
}

/// What `Value` looks like in a manifest, for the schema only.
#[derive(JsonSchema)]
#[serde(untagged)]
#[expect(dead_code, reason = "only its schema is used")]
enum ValueShape {
    Plain(String),
    Secret(SecretShape),
}

#[derive(JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "SecretValue")]
#[expect(dead_code, reason = "only its schema is used")]
struct SecretShape {
    secret_ref: SecretRef,
}

impl JsonSchema for Value {
    fn schema_name() -> Cow<'static, str> {
        "Value".into()
    }

    fn json_schema(generator: &mut SchemaGenerator) -> Schema {
        let mut schema = ValueShape::json_schema(generator);
        schema.insert(
            "description".into(),
            "A plain string, or {secretRef: {env: NAME}} / {secretRef: {file: path}} read when needed.".into(),
        );
        schema
    }
}

/// `purko_protocol::Marks` as written in `catalogue:`, for the schema only. A test checks that
/// its fields are the ones `Marks` reads.
#[derive(JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(
    rename = "Marks",
    description = "Trusted marks of one upstream tool; they settle its kind before any inference."
)]
#[expect(dead_code, reason = "only its schema is used")]
pub(crate) struct MarksShape {
    /// The tool only reads: kind `read`.
    #[serde(default)]
    read_only: bool,
    /// The tool changes or deletes things: kind `write`.
    #[serde(default)]
    destructive: bool,
    /// The tool sends data out of the organisation: kind `sends_out`.
    #[serde(default)]
    egress: bool,
}

/// `spec` of an `MCPServer`, as written: flat, with both transports' fields; `validate` refuses
/// the other transport's. The schema says the same with `if`/`then`, so editors flag them too.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(
    rename = "MCPServerSpec",
    description = "How to reach one MCP server: transport stdio (command, args, env, cwd) or http (url, headers).",
    extend("allOf" = [
        {
            "if": {"properties": {"transport": {"const": "stdio"}}},
            "then": {
                "required": ["command"],
                "properties": {"url": false, "headers": false}
            }
        },
        {
            "if": {"properties": {"transport": {"const": "http"}}},
            "then": {
                "required": ["url"],
                "properties": {"command": false, "args": false, "env": false, "cwd": false}
            }
        }
    ])
)]
pub(crate) struct McpServerSpecDocument {
    pub transport: TransportKind,
    /// stdio: the program to run; required.
    #[serde(default)]
    pub command: Option<String>,
    /// stdio: its arguments.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// stdio: variables added to its environment.
    #[serde(default)]
    pub env: Option<IndexMap<String, Value>>,
    /// stdio: its working folder, relative to the manifest's folder when relative.
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// http: the streamable HTTP endpoint, an http or https URL; required.
    #[serde(default)]
    pub url: Option<String>,
    /// http: headers sent with every request.
    #[serde(default)]
    pub headers: Option<IndexMap<String, Value>>,
    /// How long one tools/call may take; 60 unless set; more than 0.
    #[serde(default = "default_tool_timeout")]
    #[schemars(range(min = 1))]
    pub tool_timeout_seconds: u64,
    /// How long starting or connecting and initialize may take; 30 unless set; more than 0.
    #[serde(default = "default_startup_timeout")]
    #[schemars(range(min = 1))]
    pub startup_timeout_seconds: u64,
    /// Trusted marks per upstream tool name.
    #[serde(default)]
    #[schemars(with = "IndexMap<String, MarksShape>")]
    pub catalogue: IndexMap<String, Marks>,
}

fn default_tool_timeout() -> u64 {
    60
}

fn default_startup_timeout() -> u64 {
    30
}

/// A whole `kind: MCPServer` document, as written.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
#[schemars(rename = "MCPServer", title = "MCPServer")]
pub(crate) struct McpServerDocument {
    #[schemars(extend("const" = crate::parse::API_VERSION))]
    pub api_version: String,
    #[schemars(extend("const" = "MCPServer"))]
    #[expect(
        dead_code,
        reason = "read with the document's head; a field here so deny_unknown_fields accepts it"
    )]
    pub kind: String,
    pub metadata: Metadata,
    pub spec: McpServerSpecDocument,
}

impl McpServerSpecDocument {
    /// The checked spec. `validate::mcp_server` has passed, so the transport's required fields
    /// are there and the other transport's are not.
    pub(crate) fn into_spec(self) -> McpServerSpec {
        let transport = match self.transport {
            TransportKind::Stdio => Transport::Stdio(StdioTransport {
                command: self.command.unwrap_or_default(),
                args: self.args.unwrap_or_default(),
                env: self.env.unwrap_or_default(),
                cwd: self.cwd,
            }),
            TransportKind::Http => Transport::Http(HttpTransport {
                url: self.url.unwrap_or_default(),
                headers: self.headers.unwrap_or_default(),
            }),
        };
        McpServerSpec {
            transport,
            tool_timeout_seconds: self.tool_timeout_seconds,
            startup_timeout_seconds: self.startup_timeout_seconds,
            catalogue: self.catalogue,
        }
    }
}
