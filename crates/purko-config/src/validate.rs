//! The checks a manifest must pass beyond its shape: names, what each tool type takes, endpoint
//! secrets, limits above zero, rules and destination patterns that compile. Each check names the
//! node it is about, so the error can point at its line and column; the first failure wins.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};

use purko_guard::{Policy, RawDestinations, RawPolicy};

use crate::agent::{AgentDocument, Endpoint, Guardrail, Metadata, SecretRef, Tool, ToolType};
use crate::locate::NodePath;
use crate::mcp_server::{McpServerDocument, TransportKind, Value};

/// What is wrong, and where.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Problem {
    pub at: NodePath,
    pub message: String,
    pub hint: String,
}

impl Problem {
    pub fn new(at: NodePath, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            at,
            message: message.into(),
            hint: hint.into(),
        }
    }
}

type Checked = Result<(), Problem>;

pub(crate) fn agent(doc: &AgentDocument) -> Checked {
    metadata(&doc.metadata, &NodePath::default().key("metadata"))?;
    let spec = NodePath::default().key("spec");
    if let Some(code) = &doc.spec.runtime.code_execution {
        let sandbox = spec.key("runtime").key("codeExecution").key("sandbox");
        positive(
            code.sandbox.max_execution_seconds,
            &sandbox.key("maxExecutionSeconds"),
        )?;
        positive(
            code.sandbox.max_output_bytes,
            &sandbox.key("maxOutputBytes"),
        )?;
        writable_paths(&code.sandbox.writable_paths, &sandbox.key("writablePaths"))?;
    }
    if let Some(tools) = &doc.spec.tools {
        let mut first: HashMap<&str, usize> = HashMap::with_capacity(tools.len());
        for (i, t) in tools.iter().enumerate() {
            let at = spec.key("tools").index(i);
            tool(t, &at)?;
            if let Some(j) = first.insert(&t.name, i) {
                return Err(Problem::new(
                    at.key("name"),
                    format!(
                        "the tool '{}' is listed twice, first as spec.tools[{j}]",
                        t.name
                    ),
                    "list each tool once",
                ));
            }
        }
    }
    if let Some(g) = &doc.spec.guardrail {
        guardrail(g, &spec.key("guardrail"))?;
    }
    Ok(())
}

pub(crate) fn mcp_server(doc: &McpServerDocument) -> Checked {
    metadata(&doc.metadata, &NodePath::default().key("metadata"))?;
    let at = NodePath::default().key("spec");
    let spec = &doc.spec;
    let (stdio, http) = (TransportKind::Stdio, TransportKind::Http);
    let fields = [
        ("command", stdio, spec.command.is_some()),
        ("args", stdio, spec.args.is_some()),
        ("env", stdio, spec.env.is_some()),
        ("cwd", stdio, spec.cwd.is_some()),
        ("url", http, spec.url.is_some()),
        ("headers", http, spec.headers.is_some()),
    ];
    for (field, owner, present) in fields {
        if present && owner != spec.transport {
            let own: Vec<&str> = fields
                .iter()
                .filter(|(_, o, _)| *o == spec.transport)
                .map(|(f, _, _)| *f)
                .collect();
            return Err(Problem::new(
                at.key(field),
                format!("{field} belongs to transport: {owner}"),
                format!(
                    "remove {field}, or write transport: {owner}; transport: {} takes {}",
                    spec.transport,
                    own.join(", ")
                ),
            ));
        }
    }
    match spec.transport {
        TransportKind::Stdio => {
            if spec.command.as_deref().is_none_or(|c| c.trim().is_empty()) {
                let (node, message) = if spec.command.is_some() {
                    (at.key("command"), "the command is empty")
                } else {
                    (at.key("transport"), "transport: stdio needs a command")
                };
                return Err(Problem::new(
                    node,
                    message,
                    "write the program that starts the server, such as command: npx with args: [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/srv/data\"]",
                ));
            }
            if let Some(cwd) = &spec.cwd
                && cwd.as_os_str().is_empty()
            {
                return Err(Problem::new(
                    at.key("cwd"),
                    "cwd names no folder",
                    "write the folder to start the server in (relative to the manifest), or remove cwd",
                ));
            }
            if let Some(env) = &spec.env {
                for (name, value) in env {
                    let node = at.key("env").name(name);
                    if name.is_empty() || name.contains(['=', '\0']) {
                        return Err(Problem::new(
                            node,
                            format!("'{name}' is not a valid environment variable name"),
                            "write variable names such as LOG_LEVEL, without '='",
                        ));
                    }
                    entry_value(value, name, &node, false)?;
                }
            }
        }
        TransportKind::Http => {
            let Some(url) = &spec.url else {
                return Err(Problem::new(
                    at.key("transport"),
                    "transport: http needs a url",
                    "write the server's streamable HTTP endpoint, such as url: https://mcp.example.com/mcp",
                ));
            };
            http_url(url, &at.key("url"))?;
            if let Some(headers) = &spec.headers {
                for (name, value) in headers {
                    let node = at.key("headers").name(name);
                    if !is_header_name(name) {
                        return Err(Problem::new(
                            node,
                            format!("'{name}' is not a valid header name"),
                            "write header names such as Authorization or X-Api-Key",
                        ));
                    }
                    entry_value(value, name, &node, true)?;
                }
            }
        }
    }
    positive(spec.tool_timeout_seconds, &at.key("toolTimeoutSeconds"))?;
    positive(
        spec.startup_timeout_seconds,
        &at.key("startupTimeoutSeconds"),
    )?;
    for (tool, marks) in &spec.catalogue {
        let node = at.key("catalogue").name(tool);
        if tool.trim().is_empty() {
            return Err(Problem::new(
                node,
                "a catalogue entry needs a tool name",
                "write the tool's name as the server lists it",
            ));
        }
        if marks.read_only && (marks.destructive || marks.egress) {
            let other = if marks.destructive {
                "destructive"
            } else {
                "egress"
            };
            return Err(Problem::new(
                node,
                format!("the tool '{tool}' cannot be marked both read_only and {other}"),
                format!(
                    "keep read_only for a tool that only reads, or {other} for one that does not"
                ),
            ));
        }
    }
    Ok(())
}

/// An env or header value: a plain value with no line break, or a secret that names something.
fn entry_value(value: &Value, name: &str, at: &NodePath, header: bool) -> Checked {
    match value {
        Value::Plain(text) if header && text.contains(['\r', '\n']) => Err(Problem::new(
            at.clone(),
            format!("the value of the header '{name}' holds a line break"),
            "write the header's value on one line",
        )),
        Value::Secret(secret) if secret_is_empty(secret) => Err(Problem::new(
            at.key("secretRef"),
            "the secretRef names no variable or file",
            "write secretRef: {env: NAME} or secretRef: {file: path}",
        )),
        _ => Ok(()),
    }
}

fn secret_is_empty(secret: &SecretRef) -> bool {
    match secret {
        SecretRef::Env(name) => name.is_empty(),
        SecretRef::File(path) => path.as_os_str().is_empty(),
    }
}

fn metadata(metadata: &Metadata, at: &NodePath) -> Checked {
    for (key, value) in [("name", &metadata.name), ("namespace", &metadata.namespace)] {
        if !is_dns_label(value) {
            return Err(Problem::new(
                at.key(key),
                format!(
                    "'{value}' is not a valid {key}: use lower-case letters, digits and '-', starting and ending with a letter or digit, at most 63 characters"
                ),
                format!("rename it, for example to '{}'", suggest_label(value)),
            ));
        }
    }
    Ok(())
}

/// Like a Kubernetes DNS label (RFC 1123).
pub(crate) fn is_dns_label(name: &str) -> bool {
    let bytes = name.as_bytes();
    (1..=63).contains(&bytes.len())
        && bytes
            .iter()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && bytes.first() != Some(&b'-')
        && bytes.last() != Some(&b'-')
}

fn suggest_label(name: &str) -> String {
    let mapped: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    let trimmed: String = mapped.trim_matches('-').chars().take(63).collect();
    let trimmed = trimmed.trim_end_matches('-');
    if trimmed.is_empty() {
        "my-agent".into()
    } else {
        trimmed.into()
    }
}

fn positive(value: u64, at: &NodePath) -> Checked {
    if value == 0 {
        return Err(Problem::new(
            at.clone(),
            "must be more than 0",
            "give a whole number above 0",
        ));
    }
    Ok(())
}

/// Each writable path becomes its own tmpfs in the sandbox: it must be absolute and normal, and
/// no two may overlap (one would hide the other).
fn writable_paths(paths: &[PathBuf], at: &NodePath) -> Checked {
    for (i, path) in paths.iter().enumerate() {
        let text = path.to_string_lossy();
        let normal = path.is_absolute()
            && path
                .components()
                .skip(1)
                .all(|c| matches!(c, Component::Normal(_)))
            && !text.contains("/./")
            && !text.ends_with("/.");
        if !normal {
            return Err(Problem::new(
                at.index(i),
                format!("'{text}' is not an absolute, normal path"),
                "give a full path such as /tmp or /work/out, without '.' or '..'",
            ));
        }
        let this: PathBuf = path.components().collect();
        for (j, earlier) in paths[..i].iter().enumerate() {
            let earlier_path: PathBuf = earlier.components().collect();
            if earlier_path.starts_with(&this) || this.starts_with(&earlier_path) {
                return Err(Problem::new(
                    at.index(i),
                    format!(
                        "'{text}' overlaps writablePaths[{j}] ('{}')",
                        earlier.display()
                    ),
                    "list only one of them: each writable path is its own empty tmpfs",
                ));
            }
        }
    }
    Ok(())
}

fn tool(tool: &Tool, at: &NodePath) -> Checked {
    if tool.name.trim().is_empty() {
        return Err(Problem::new(
            at.key("name"),
            "a tool needs a name",
            "write the tool's name as its backend knows it",
        ));
    }
    let kind = tool.tool_type;
    if kind == ToolType::Api {
        let Some(endpoint) = &tool.endpoint else {
            return Err(Problem::new(
                at.clone(),
                format!("the api tool '{}' has no endpoint", tool.name),
                "add endpoint: {url: https://..., method: POST} to the tool",
            ));
        };
        if let Some(schema) = &tool.input_schema
            && !schema.is_object()
        {
            return Err(Problem::new(
                at.key("inputSchema"),
                "must be a mapping: a JSON Schema object",
                "write inputSchema as a mapping, such as {type: object, properties: {...}}",
            ));
        }
        return endpoint_checks(endpoint, &at.key("endpoint"));
    }
    for (field, present) in [
        ("endpoint", tool.endpoint.is_some()),
        ("description", tool.description.is_some()),
        ("inputSchema", tool.input_schema.is_some()),
    ] {
        if present {
            return Err(Problem::new(
                at.key(field),
                format!(
                    "the {kind} tool '{}' takes no {field}; only api tools do",
                    tool.name
                ),
                format!(
                    "remove {field}, or make the tool type: api; the {kind} backend describes its own tools"
                ),
            ));
        }
    }
    Ok(())
}

fn endpoint_checks(endpoint: &Endpoint, at: &NodePath) -> Checked {
    endpoint_url(&endpoint.url, &at.key("url"))?;
    positive(endpoint.timeout_seconds, &at.key("timeoutSeconds"))?;
    match (&endpoint.auth_scheme, &endpoint.secret_ref) {
        (Some(scheme), None) => {
            return Err(Problem::new(
                at.key("authScheme"),
                format!("{scheme:?} needs a secretRef to read the secret from"),
                "add secretRef: {env: NAME} or secretRef: {file: path/relative/to/the/manifest}",
            ));
        }
        (None, Some(_)) => {
            return Err(Problem::new(
                at.key("secretRef"),
                "a secretRef needs an authScheme that says how to send the secret",
                "add authScheme: Bearer, Token, Basic or ApiKey",
            ));
        }
        _ => {}
    }
    if endpoint.auth_header.is_some() && endpoint.auth_scheme.is_none() {
        return Err(Problem::new(
            at.key("authHeader"),
            "an authHeader needs an authScheme and a secretRef",
            "add authScheme: Bearer, Token, Basic or ApiKey and a secretRef, or remove authHeader",
        ));
    }
    if let Some(header) = &endpoint.auth_header
        && !is_header_name(header)
    {
        return Err(Problem::new(
            at.key("authHeader"),
            format!("'{header}' is not a valid header name"),
            "write a header name such as Authorization or X-Api-Key",
        ));
    }
    if let Some(secret) = &endpoint.secret_ref
        && secret_is_empty(secret)
    {
        return Err(Problem::new(
            at.key("secretRef"),
            "the secretRef names no variable or file",
            "write secretRef: {env: NAME} or secretRef: {file: path}",
        ));
    }
    for (i, name) in endpoint.headers.keys().enumerate() {
        if !is_header_name(name) {
            return Err(Problem::new(
                at.key("headers"),
                format!("header {} '{name}' is not a valid header name", i + 1),
                "write header names such as Content-Type or X-Request-Source",
            ));
        }
    }
    Ok(())
}

fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// An endpoint's url: a full http(s) URL, possibly with `{name}` placeholders filled from the
/// arguments, or exactly one placeholder (`{url}`) that takes a whole URL from the model.
fn endpoint_url(text: &str, at: &NodePath) -> Checked {
    let mut rest = text;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let name_ok = after.find('}').is_some_and(|close| {
            let name = &after[..close];
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
        });
        if !name_ok {
            return Err(Problem::new(
                at.clone(),
                format!(
                    "'{text}' has a placeholder that is not closed or not a plain argument name"
                ),
                "write placeholders as {name}, with the argument's name between the braces",
            ));
        }
        rest = &after[after.find('}').unwrap_or(after.len())..];
    }
    if text.starts_with('{') && text.ends_with('}') && text[1..].find('}') == Some(text.len() - 2) {
        return Ok(());
    }
    http_url(text, at)
}

fn http_url(text: &str, at: &NodePath) -> Checked {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    let host = rest.map(|r| r.split(['/', '?', '#']).next().unwrap_or_default());
    if host.is_some_and(|h| !h.is_empty() && !h.contains(char::is_whitespace)) {
        return Ok(());
    }
    Err(Problem::new(
        at.clone(),
        format!("'{text}' is not an http or https URL"),
        "write a full URL such as https://api.example.com/v1/query",
    ))
}

fn guardrail(guardrail: &Guardrail, at: &NodePath) -> Checked {
    if let Some(path) = &guardrail.tool_kinds
        && path.as_os_str().is_empty()
    {
        return Err(Problem::new(
            at.key("toolKinds"),
            "toolKinds names no file",
            "write toolKinds: tool_kinds.yaml (relative to the manifest), or remove it",
        ));
    }
    // Compile each rule and pattern alone, so an error points at the one that fails.
    let nowhere = Path::new("");
    for (i, rule) in guardrail.rules.iter().enumerate() {
        let alone = RawPolicy {
            rules: vec![rule.clone()],
            destinations: RawDestinations::default(),
        };
        if let Err(e) = Policy::compile(alone, nowhere) {
            return Err(guard_problem(&e, at.key("rules").index(i), "rule 1: "));
        }
    }
    for (i, pattern) in guardrail.destinations.allow.iter().enumerate() {
        let alone = RawPolicy {
            rules: Vec::new(),
            destinations: RawDestinations {
                allow: vec![pattern.clone()],
            },
        };
        if let Err(e) = Policy::compile(alone, nowhere) {
            let at = at.key("destinations").key("allow").index(i);
            return Err(guard_problem(&e, at, "destinations.allow: "));
        }
    }
    positive(
        guardrail.approvals.timeout_seconds,
        &at.key("approvals").key("timeoutSeconds"),
    )?;
    if let Some(webhook) = &guardrail.approvals.webhook {
        let at = at.key("approvals").key("webhook");
        http_url(&webhook.url, &at.key("url"))?;
        for name in webhook.headers.keys() {
            if !is_header_name(name) {
                return Err(Problem::new(
                    at.key("headers"),
                    format!("'{name}' is not a valid header name"),
                    "write header names such as Content-Type or X-Request-Source",
                ));
            }
        }
    }
    Ok(())
}

/// A purko-guard error about one rule or pattern, without the file and numbering it adds.
fn guard_problem(error: &purko_guard::Error, at: NodePath, prefix: &str) -> Problem {
    let message = match error {
        purko_guard::Error::Parse { message, .. } => message.clone(),
        other => other.to_string(),
    };
    let message = message.strip_prefix(prefix).unwrap_or(&message).to_owned();
    Problem::new(at, message, error.hint())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn names_follow_dns_labels() {
        for good in ["a", "multi-tool-agent", "ai-agents", "x1", &"a".repeat(63)] {
            assert!(is_dns_label(good), "{good}");
        }
        for bad in ["", "-a", "a-", "Agent", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_dns_label(bad), "{bad}");
        }
        assert_eq!(suggest_label("My_Agent"), "my-agent");
        assert_eq!(suggest_label("__"), "my-agent");
    }

    #[test]
    fn urls_need_a_scheme_and_a_host() {
        let at = NodePath::default();
        assert!(http_url("http://prometheus.monitoring.svc:9090/api/v1/query", &at).is_ok());
        assert!(http_url("https://h", &at).is_ok());
        assert!(endpoint_url("{url}", &at).is_ok());
        assert!(endpoint_url("https://api.example.com/items/{id}/tags/{tag}", &at).is_ok());
        for bad in [
            "{url",
            "https://h/{}",
            "https://h/{a b}",
            "{a}{b}",
            "x{url}",
        ] {
            assert!(endpoint_url(bad, &at).is_err(), "{bad}");
        }
        for bad in [
            "ftp://h/x",
            "prometheus:9090",
            "https://",
            "https:///x",
            "http://a b/",
        ] {
            assert!(http_url(bad, &at).is_err(), "{bad}");
        }
    }
}
