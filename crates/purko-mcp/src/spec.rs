//! What an operator registers: one MCP server, how to reach it, and how long to wait for it.
//!
//! Invariant: the values of `env` and `headers` are secrets. They never print (`Debug` shows
//! only the names), and [`ServerSpec::redact`] scrubs them from any text that leaves the crate.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use purko_protocol::Marks;

/// One MCP server as an `MCPServer` manifest registers it.
#[derive(Clone)]
pub struct ServerSpec {
    /// The manifest's `metadata.name`; also the prefix of colliding tool names.
    pub name: String,
    pub transport: Transport,
    /// How long one `tools/call` may take.
    pub tool_timeout: Duration,
    /// How long `initialize` plus the first `tools/list` may take.
    pub startup_timeout: Duration,
    /// Trusted marks per upstream tool name (the manifest's `catalogue:`).
    pub catalogue: BTreeMap<String, Marks>,
}

/// How to reach a server.
#[derive(Clone)]
pub enum Transport {
    /// A child process speaking JSON-RPC on stdin and stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Resolved values; they may be secrets.
        env: Vec<(String, String)>,
        cwd: Option<PathBuf>,
    },
    /// Streamable HTTP at `url`.
    Http {
        url: String,
        /// Resolved values; they may be secrets.
        headers: Vec<(String, String)>,
    },
}

impl ServerSpec {
    /// A server with the default timeouts (30 s per call, 30 s to start) and no catalogue.
    pub fn new(name: impl Into<String>, transport: Transport) -> Self {
        Self {
            name: name.into(),
            transport,
            tool_timeout: Duration::from_secs(30),
            startup_timeout: Duration::from_secs(30),
            catalogue: BTreeMap::new(),
        }
    }

    /// `text` with every secret value of this spec replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        let secrets = match &self.transport {
            Transport::Stdio { env, .. } => env,
            Transport::Http { headers, .. } => headers,
        };
        let mut out = text.to_owned();
        // Longest first, so a secret that contains another is scrubbed whole.
        let mut values: Vec<&str> = secrets
            .iter()
            .map(|(_, v)| v.as_str())
            .filter(|v| v.len() >= 3)
            .collect();
        values.sort_by_key(|v| std::cmp::Reverse(v.len()));
        for value in values {
            out = out.replace(value, "[redacted]");
        }
        out
    }
}

impl fmt::Debug for ServerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerSpec")
            .field("name", &self.name)
            .field("transport", &self.transport)
            .field("tool_timeout", &self.tool_timeout)
            .field("startup_timeout", &self.startup_timeout)
            .field("catalogue", &self.catalogue)
            .finish()
    }
}

/// Names only: the values are secrets.
struct Names<'a>(&'a [(String, String)]);

impl fmt::Debug for Names<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map()
            .entries(self.0.iter().map(|(k, _)| (k, "[redacted]")))
            .finish()
    }
}

impl fmt::Debug for Transport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
            } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &Names(env))
                .field("cwd", cwd)
                .finish(),
            Transport::Http { url, headers } => f
                .debug_struct("Http")
                .field("url", url)
                .field("headers", &Names(headers))
                .finish(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_never_print_and_are_redacted() {
        let spec = ServerSpec::new(
            "gh",
            Transport::Stdio {
                command: "node".into(),
                args: vec![],
                env: vec![("TOKEN".into(), "s3cr3t-value".into())],
                cwd: None,
            },
        );
        let shown = format!("{spec:?}");
        assert!(!shown.contains("s3cr3t"), "{shown}");
        assert!(shown.contains("TOKEN"), "{shown}");
        assert_eq!(
            spec.redact("bad token s3cr3t-value here"),
            "bad token [redacted] here"
        );
        let http = ServerSpec::new(
            "h",
            Transport::Http {
                url: "http://x".into(),
                headers: vec![("Authorization".into(), "Bearer abc123".into())],
            },
        );
        assert!(!format!("{http:?}").contains("abc123"));
        assert_eq!(http.redact("got Bearer abc123"), "got [redacted]");
    }
}
