//! One API call: the request built from the tool and the arguments, redirects followed by
//! hand (each hop to another origin checked by the egress guard), the answer read up to a cap.

#![allow(
    clippy::result_large_err,
    reason = "a refusal is the observation itself, made once per call; boxing buys nothing"
)]

use base64::Engine as _;
use purko_protocol::{Code, Observation};
use reqwest::header::{
    AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, LOCATION, RETRY_AFTER,
};
use reqwest::{Client, StatusCode};
use serde_json::Value;
use url::Url;

use super::answer::{self, Redactor, Reply};
use super::template::{self, Target};
use super::{ApiRequest, ApiTool, AuthScheme};
use crate::egress::{Blocked, base_builder};
use crate::error::{Error, Result};

/// The most redirects followed for one call.
const MAX_REDIRECTS: usize = 5;

/// Calls API tools. Holds the plain client for operator-configured origins; URLs from the
/// model go through the calling agent's [`Egress`](crate::Egress) and its guarded clients.
#[derive(Clone, Debug)]
pub struct ApiClient {
    plain: Client,
}

impl ApiClient {
    pub fn new() -> Result<Self> {
        crate::install_crypto();
        let plain = base_builder()
            .build()
            .map_err(|e| Error::Client(e.to_string()))?;
        Ok(Self { plain })
    }

    /// Calls the tool; every outcome, refusals and failures included, is an observation.
    pub async fn call(&self, request: ApiRequest<'_>) -> Observation {
        let tool = request.tool;
        let target = match template::fill(&request) {
            Ok(target) => target,
            Err(observation) => return observation,
        };
        let redactor = Redactor::new(tool);
        let (outgoing, url) = match Outgoing::new(&request, &target) {
            Ok(first) => first,
            Err(observation) => return observation,
        };
        let exchange = self.exchange(&request, Target { url, ..target }, outgoing, &redactor);
        match tokio::time::timeout(tool.timeout, exchange).await {
            Ok(Ok(reply)) => {
                tracing::debug!(tool = %tool.name, status = reply.status, truncated = reply.truncated, "api tool answered");
                answer::observe(tool, &reply, &redactor)
            }
            Ok(Err(observation)) => observation,
            Err(_) => answer::timeout(tool, Some(tool.timeout)),
        }
    }

    async fn exchange(
        &self,
        request: &ApiRequest<'_>,
        target: Target,
        mut outgoing: Outgoing,
        redactor: &Redactor,
    ) -> std::result::Result<Reply, Observation> {
        let tool = request.tool;
        let mut url = target.url;
        for hop in 0..=MAX_REDIRECTS {
            let client = if target.trusted.as_ref() == Some(&url.origin()) {
                &self.plain
            } else {
                // IP literals never reach the guarded resolver: this check is their only gate.
                let checked = request
                    .egress
                    .check(url.as_str())
                    .map_err(|blocked| answer::blocked(tool, &redirected(blocked, hop)))?;
                request.egress.client_for(&checked)
            };
            tracing::debug!(tool = %tool.name, method = %outgoing.method, origin = %url.origin().ascii_serialization(), hop, "sending");
            let mut builder = client
                .request(outgoing.method.clone(), url.clone())
                .headers(outgoing.headers.clone());
            if let Some(body) = &outgoing.body {
                builder = builder.body(body.clone());
            }
            let response = builder
                .send()
                .await
                .map_err(|e| answer::failure(tool, &e, redactor))?;
            let status = response.status();
            let location = response
                .headers()
                .get(LOCATION)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            match (is_redirect(status), location) {
                (true, Some(location)) => {
                    if hop == MAX_REDIRECTS {
                        return Err(Observation::error(
                            Code::UpstreamError,
                            format!(
                                "{} was redirected more than {MAX_REDIRECTS} times",
                                tool.name
                            ),
                            "tell the operator; the service's redirects do not end",
                        ));
                    }
                    let next = url.join(&location).map_err(|_| {
                        Observation::error(
                            Code::UpstreamError,
                            format!(
                                "{} was redirected to an address that is not a URL",
                                tool.name
                            ),
                            "tell the operator; the service answered with a broken redirect",
                        )
                    })?;
                    outgoing.follow(status, &url, &next);
                    url = next;
                }
                _ => return read(response, request.max_body_bytes, redactor, tool).await,
            }
        }
        unreachable!("the loop returns on its last hop")
    }
}

fn is_redirect(status: StatusCode) -> bool {
    matches!(status.as_u16(), 301 | 302 | 303 | 307 | 308)
}

fn redirected(blocked: Blocked, hop: usize) -> Blocked {
    if hop == 0 {
        return blocked;
    }
    Blocked {
        reason: format!("the service redirected there, and {}", blocked.reason),
        ..blocked
    }
}

/// What is sent, as it changes along redirects.
#[derive(Debug)]
struct Outgoing {
    method: reqwest::Method,
    headers: HeaderMap,
    body: Option<Vec<u8>>,
    auth_header: Option<HeaderName>,
}

impl Outgoing {
    /// The first request, and its URL with the query parameters added.
    fn new(
        request: &ApiRequest<'_>,
        target: &Target,
    ) -> std::result::Result<(Self, Url), Observation> {
        let tool = request.tool;
        let mut headers = HeaderMap::new();
        for (name, value) in &tool.headers {
            let (Ok(name), Ok(value)) = (
                HeaderName::from_bytes(name.as_bytes()),
                HeaderValue::from_str(value),
            ) else {
                return Err(misconfigured(
                    tool,
                    &format!("its header '{name}' is not a valid HTTP header"),
                ));
            };
            headers.append(name, value);
        }
        let mut auth_header = None;
        if let Some(auth) = &tool.auth {
            let name = match &auth.header {
                Some(name) => HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                    misconfigured(
                        tool,
                        &format!("its auth header '{name}' is not a valid header name"),
                    )
                })?,
                None => AUTHORIZATION,
            };
            let secret = auth.credential.expose();
            let value = match auth.scheme {
                AuthScheme::Bearer => format!("Bearer {secret}"),
                AuthScheme::Token => format!("Token {secret}"),
                AuthScheme::Basic => format!(
                    "Basic {}",
                    base64::engine::general_purpose::STANDARD.encode(secret)
                ),
                AuthScheme::ApiKey if name == AUTHORIZATION => format!("ApiKey {secret}"),
                AuthScheme::ApiKey => secret.to_owned(),
            };
            let mut value = HeaderValue::from_str(&value).map_err(|_| {
                misconfigured(tool, "its credential cannot be sent in an HTTP header")
            })?;
            value.set_sensitive(true);
            headers.insert(name.clone(), value);
            auth_header = Some(name);
        }
        if let Some(key) = request.idempotency_key {
            let value = HeaderValue::from_str(key).map_err(|_| {
                Observation::error(
                    Code::Internal,
                    "the idempotency key cannot be sent in an HTTP header",
                    "call the tool again",
                )
            })?;
            headers.insert(HeaderName::from_static("idempotency-key"), value);
        }

        let rest = request
            .arguments
            .iter()
            .filter(|(name, _)| !target.used.contains(name));
        let method = super::to_reqwest(tool.method);
        let mut url = target.url.clone();
        let body = if tool.method.has_body() {
            let object: serde_json::Map<String, Value> =
                rest.map(|(k, v)| (k.clone(), v.clone())).collect();
            headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
            Some(serde_json::to_vec(&Value::Object(object)).unwrap_or_default())
        } else {
            let pairs: Vec<(&String, String)> = rest
                .flat_map(|(name, value)| query_values(value).into_iter().map(move |v| (name, v)))
                .collect();
            if !pairs.is_empty() {
                url.query_pairs_mut().extend_pairs(pairs);
            }
            None
        };
        Ok((
            Self {
                method,
                headers,
                body,
                auth_header,
            },
            url,
        ))
    }

    /// Adjusts the request for the next hop of a redirect.
    fn follow(&mut self, status: StatusCode, from: &Url, to: &Url) {
        let to_get = status == StatusCode::SEE_OTHER
            || (matches!(status.as_u16(), 301 | 302) && self.method == reqwest::Method::POST);
        if to_get {
            self.method = reqwest::Method::GET;
            self.body = None;
            self.headers.remove(CONTENT_TYPE);
        }
        if from.origin() != to.origin() {
            self.headers.remove(AUTHORIZATION);
            if let Some(name) = &self.auth_header {
                self.headers.remove(name);
            }
        }
    }
}

/// Query values of one argument: strings as is, numbers and booleans as text, arrays as
/// repeated parameters, objects as compact JSON, nulls left out.
fn query_values(value: &Value) -> Vec<String> {
    match value {
        Value::Null => vec![],
        Value::String(s) => vec![s.clone()],
        Value::Array(items) => items
            .iter()
            .flat_map(|item| match item {
                Value::Array(_) => vec![item.to_string()],
                other => query_values(other),
            })
            .collect(),
        other => vec![other.to_string()],
    }
}

fn misconfigured(tool: &ApiTool, what: &str) -> Observation {
    Observation::error(
        Code::Internal,
        format!("tool {} is misconfigured: {what}", tool.name),
        "tell the operator; the tool's configuration needs fixing",
    )
}

/// Reads at most `max` body bytes, streaming; the rest is left unread.
async fn read(
    mut response: reqwest::Response,
    max: usize,
    redactor: &Redactor,
    tool: &ApiTool,
) -> std::result::Result<Reply, Observation> {
    let status = response.status().as_u16();
    let headers = response.headers();
    let json = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| {
            let essence = ct
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            essence == "application/json" || essence.ends_with("+json")
        });
    let retry_after = headers
        .get(RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let mut body = Vec::new();
    let mut truncated = false;
    while let Some(chunk) = response
        .chunk()
        .await
        .map_err(|e| answer::failure(tool, &e, redactor))?
    {
        let room = max - body.len();
        if chunk.len() > room {
            body.extend_from_slice(&chunk[..room]);
            truncated = true;
            break;
        }
        body.extend_from_slice(&chunk);
    }
    Ok(Reply {
        status,
        json,
        retry_after,
        body,
        truncated,
    })
}
