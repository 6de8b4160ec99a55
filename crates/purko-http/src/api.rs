//! API tools (seed 000's `EndpointSpec`): one HTTP endpoint per tool, called with the model's
//! arguments and answered with an observation.
//!
//! Invariants: the model's arguments never change the scheme, host or port of an operator's
//! template (placeholders are encoded as one path segment); a URL that does come from the model
//! goes through the egress guard; the credential never appears in an observation or a log line.

mod answer;
mod exchange;
mod template;

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use crate::egress::Egress;
pub use exchange::ApiClient;

pub use purko_protocol::{AuthScheme, HttpMethod as Method};

/// The request method reqwest sends for a method.
pub(crate) fn to_reqwest(method: Method) -> reqwest::Method {
    match method {
        Method::Get => reqwest::Method::GET,
        Method::Post => reqwest::Method::POST,
        Method::Put => reqwest::Method::PUT,
        Method::Patch => reqwest::Method::PATCH,
        Method::Delete => reqwest::Method::DELETE,
    }
}

/// A credential from the environment or a secret file, never from the model. It prints as
/// `[redacted]`; [`Secret::expose`] is the one way to read it.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(secret: impl Into<String>) -> Self {
        Self(secret.into())
    }

    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl From<String> for Secret {
    fn from(secret: String) -> Self {
        Self(secret)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("[redacted]")
    }
}

/// An API tool's authentication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Auth {
    pub scheme: AuthScheme,
    /// The header to put the credential in; `None` means `Authorization`.
    pub header: Option<String>,
    pub credential: Secret,
}

/// One HTTP endpoint offered to a model as a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiTool {
    pub name: String,
    /// A URL template: `https://api.example.com/users/{id}`, or exactly `{url}` for a tool that
    /// takes a whole URL from the model.
    pub url: String,
    pub method: Method,
    /// Static headers from the tool's spec.
    pub headers: Vec<(String, String)>,
    /// For the whole exchange: connecting, redirects and reading the body.
    pub timeout: Duration,
    pub auth: Option<Auth>,
}

impl ApiTool {
    /// The `{name}` placeholders of the URL template, in order, each once.
    pub fn placeholders(&self) -> Vec<&str> {
        let mut names = Vec::new();
        for piece in template::pieces(&self.url) {
            if let template::Piece::Placeholder(name) = piece
                && !names.contains(&name)
            {
                names.push(name);
            }
        }
        names
    }

    /// `Some("url")` when the template is exactly `{url}`: the model supplies the whole URL.
    pub fn whole_url_argument(&self) -> Option<&str> {
        match template::pieces(&self.url).as_slice() {
            [template::Piece::Placeholder(name)] => Some(name),
            _ => None,
        }
    }
}

/// One call of an API tool.
#[derive(Clone, Copy, Debug)]
pub struct ApiRequest<'a> {
    pub tool: &'a ApiTool,
    pub arguments: &'a serde_json::Map<String, Value>,
    /// Sent as the `Idempotency-Key` header.
    pub idempotency_key: Option<&'a str>,
    /// The calling agent's guard, for URLs from the model and redirects to other origins.
    pub egress: &'a Egress,
    /// The most body bytes read; the rest is cut and the observation marked `truncated`.
    pub max_body_bytes: usize,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn tool(url: &str) -> ApiTool {
        ApiTool {
            name: "t".into(),
            url: url.into(),
            method: Method::Get,
            headers: vec![],
            timeout: Duration::from_secs(1),
            auth: Some(Auth {
                scheme: AuthScheme::Bearer,
                header: None,
                credential: Secret::new("s3cr3t"),
            }),
        }
    }

    #[test]
    fn placeholders_are_listed_once_in_order() {
        let t = tool("https://x.example/{org}/{repo}/issues/{org}?q={q}");
        assert_eq!(t.placeholders(), vec!["org", "repo", "q"]);
        assert_eq!(t.whole_url_argument(), None);
        assert_eq!(tool("{url}").whole_url_argument(), Some("url"));
        assert_eq!(tool("{url}/x").whole_url_argument(), None);
    }

    #[test]
    fn secrets_never_print() {
        let t = tool("{url}");
        let shown = format!("{t:?} {}", Secret::new("s3cr3t"));
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }

    #[test]
    fn methods_parse_in_any_case() {
        assert_eq!("patch".parse::<Method>(), Ok(Method::Patch));
        assert!("TRACE".parse::<Method>().is_err());
    }
}
