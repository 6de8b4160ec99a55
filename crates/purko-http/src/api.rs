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
use std::str::FromStr;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::egress::Egress;
pub use exchange::ApiClient;

/// The HTTP methods an API tool may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Method {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl Method {
    /// Whether the arguments travel as a JSON body (else as query parameters).
    pub fn has_body(self) -> bool {
        matches!(self, Self::Post | Self::Put | Self::Patch)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }

    fn to_reqwest(self) -> reqwest::Method {
        match self {
            Self::Get => reqwest::Method::GET,
            Self::Post => reqwest::Method::POST,
            Self::Put => reqwest::Method::PUT,
            Self::Patch => reqwest::Method::PATCH,
            Self::Delete => reqwest::Method::DELETE,
        }
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Method {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text.to_ascii_uppercase().as_str() {
            "GET" => Ok(Self::Get),
            "POST" => Ok(Self::Post),
            "PUT" => Ok(Self::Put),
            "PATCH" => Ok(Self::Patch),
            "DELETE" => Ok(Self::Delete),
            _ => Err(format!(
                "'{text}' is not one of GET, POST, PUT, PATCH, DELETE"
            )),
        }
    }
}

/// How the credential is presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AuthScheme {
    /// `Authorization: Bearer <secret>`.
    Bearer,
    /// `Authorization: Token <secret>`.
    Token,
    /// `Authorization: Basic base64(<secret>)`, the secret written as `user:password`.
    Basic,
    /// `Authorization: ApiKey <secret>`, or the raw secret in a custom header.
    ApiKey,
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
