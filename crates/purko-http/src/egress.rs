//! The egress guard: no byte leaves for a URL that came from a model until the URL, and every
//! address its name resolves to, has been checked.
//!
//! Invariant: a guarded request connects only to an address this module checked. Literal
//! addresses are checked by [`Egress::check`] (reqwest never asks a resolver about them); names
//! are resolved by Purko's own resolver inside the guarded clients, which refuses the whole name
//! when any of its addresses is blocked, so a second, different DNS answer cannot slip in.

mod admit;
mod ranges;

use std::fmt;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use url::{Host, Url};

use crate::error::{Error, Result};
use admit::{Admitted, trim_dot};
pub use ranges::blocked_reason;

/// Host names that lead to a cloud provider's metadata service.
const METADATA_NAMES: &[&str] = &[
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
    "instance-data.ec2.internal",
];

/// Host names that mean this machine.
const LOOPBACK_NAMES: &[&str] = &[
    "localhost",
    "localhost.localdomain",
    "ip6-localhost",
    "ip6-loopback",
];

/// A URL Purko refused to send to, and why, in words a model can act on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// The URL as given, with any user information removed.
    pub url: String,
    pub reason: String,
}

impl fmt::Display for Blocked {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Purko refused to send a request to {}: {}.",
            self.url, self.reason
        )
    }
}

impl std::error::Error for Blocked {}

/// One agent's egress guard, built from its `destinations.allow` list.
#[derive(Clone)]
pub struct Egress {
    admitted: Arc<Admitted>,
    /// Resolves names and refuses any blocked address.
    strict: reqwest::Client,
    /// For URLs the operator admitted: skips the range check for admitted names.
    admitting: reqwest::Client,
}

impl fmt::Debug for Egress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Egress")
            .field("admitted", &self.admitted)
            .finish_non_exhaustive()
    }
}

impl Egress {
    /// Builds the guard. `admitted` holds the agent's `destinations.allow` patterns: host names
    /// (`api.example.com`, `*.example.com`, `127.0.0.1:8080`), URL prefixes
    /// (`https://hooks.example.com/services/*`) and e-mail addresses, which admit nothing here.
    pub fn new(admitted: &[String]) -> Result<Egress> {
        let admitted = Arc::new(Admitted::new(admitted)?);
        let strict = guarded_client(GuardedResolver { admitted: None })?;
        let admitting = guarded_client(GuardedResolver {
            admitted: Some(admitted.clone()),
        })?;
        Ok(Egress {
            admitted,
            strict,
            admitting,
        })
    }

    /// Checks what can be checked without DNS: syntax, scheme, user information, literal
    /// addresses in every spelling the URL parser accepts, and metadata and loopback names.
    pub fn check(&self, url: &str) -> std::result::Result<Url, Blocked> {
        let refuse = |shown: String, reason: String| Blocked { url: shown, reason };
        let userinfo = || {
            refuse(
                without_userinfo(url),
                "the URL holds user information (text before '@' in the host part); \
                 Purko never sends credentials that come from a model"
                    .into(),
            )
        };
        let has_userinfo = raw_authority(url).contains('@');
        let parsed = match Url::parse(url) {
            Ok(parsed) => parsed,
            Err(_) if has_userinfo => return Err(userinfo()),
            Err(e) => {
                return Err(refuse(
                    url.to_owned(),
                    format!("it is not a valid absolute URL ({e})"),
                ));
            }
        };
        if !matches!(parsed.scheme(), "http" | "https") {
            let mut shown = without_userinfo(url);
            if shown.len() > 200 {
                shown = format!("{}:...", parsed.scheme());
            }
            return Err(refuse(
                shown,
                format!(
                    "only http and https URLs may be fetched, not {}:",
                    parsed.scheme()
                ),
            ));
        }
        if has_userinfo || !parsed.username().is_empty() || parsed.password().is_some() {
            return Err(userinfo());
        }
        let shown = parsed.as_str().to_owned();
        let admitted = self.admitted.admits(&parsed);
        match parsed.host() {
            Some(Host::Domain(name)) => {
                if !self.admitted.names_exactly(name)
                    && let Some(reason) = name_reason(name)
                {
                    return Err(refuse(shown, reason));
                }
            }
            Some(Host::Ipv4(ip)) if !admitted => {
                if let Some(reason) = blocked_reason(IpAddr::V4(ip)) {
                    return Err(refuse(shown, reason));
                }
            }
            Some(Host::Ipv6(ip)) if !admitted => {
                if let Some(reason) = blocked_reason(IpAddr::V6(ip)) {
                    return Err(refuse(shown, reason));
                }
            }
            Some(_) => {}
            None => return Err(refuse(shown, "the URL has no host".into())),
        }
        Ok(parsed)
    }

    /// Resolves the URL's host the way the guarded client will, checking every address; any
    /// blocked address refuses the whole name. A name that does not resolve is refused too.
    pub async fn resolve(&self, url: &Url) -> std::result::Result<Vec<SocketAddr>, Blocked> {
        let checked = self.check(url.as_str())?;
        self.addresses(&checked).await.map_err(|e| Blocked {
            url: checked.to_string(),
            reason: e.to_string(),
        })
    }

    /// The addresses of a URL that passed [`Egress::check`], each checked.
    async fn addresses(&self, checked: &Url) -> std::result::Result<Vec<SocketAddr>, ResolveError> {
        let port = checked.port_or_known_default().unwrap_or(80);
        match checked.host() {
            Some(Host::Ipv4(ip)) => Ok(vec![SocketAddr::new(IpAddr::V4(ip), port)]),
            Some(Host::Ipv6(ip)) => Ok(vec![SocketAddr::new(IpAddr::V6(ip), port)]),
            Some(Host::Domain(name)) => {
                let admitted = self.admitted.admits(checked);
                resolve_name(name, port, admitted, self.admitted.names_exactly(name)).await
            }
            None => Err(ResolveError::Blocked("the URL has no host".into())),
        }
    }

    /// Whether Purko must refuse to hand this URL on: the checks of [`Egress::check`], and every
    /// address its name resolves to. Used for destinations Purko passes to a tool rather than
    /// fetches itself, so a name that does not resolve here is not a refusal: it cannot point
    /// inside, as far as this host can tell.
    pub async fn refuses(&self, url: &str) -> Option<Blocked> {
        let checked = match self.check(url) {
            Ok(checked) => checked,
            Err(blocked) => return Some(blocked),
        };
        match self.addresses(&checked).await {
            Ok(_) | Err(ResolveError::NotFound(_)) => None,
            Err(e @ ResolveError::Blocked(_)) => Some(Blocked {
                url: checked.to_string(),
                reason: e.to_string(),
            }),
        }
    }

    /// The guarded client for a URL that passed [`Egress::check`].
    pub(crate) fn client_for(&self, url: &Url) -> &reqwest::Client {
        if self.admitted.admits(url) {
            &self.admitting
        } else {
            &self.strict
        }
    }
}

/// Why a resolution was refused or failed: a blocked address is an egress refusal, a name that
/// does not resolve is an unavailable upstream.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ResolveError {
    #[error("{0}")]
    Blocked(String),
    #[error("the name {0} could not be resolved")]
    NotFound(String),
}

async fn resolve_name(
    name: &str,
    port: u16,
    skip_ranges: bool,
    named_exactly: bool,
) -> std::result::Result<Vec<SocketAddr>, ResolveError> {
    if !named_exactly && let Some(reason) = name_reason(name) {
        return Err(ResolveError::Blocked(reason));
    }
    let addrs: Vec<SocketAddr> = tokio::net::lookup_host((name, port))
        .await
        .map_err(|_| ResolveError::NotFound(name.to_owned()))?
        .collect();
    if addrs.is_empty() {
        return Err(ResolveError::NotFound(name.to_owned()));
    }
    if !skip_ranges {
        for addr in &addrs {
            if let Some(reason) = blocked_reason(addr.ip()) {
                return Err(ResolveError::Blocked(format!(
                    "{name} resolves to a blocked address ({reason})"
                )));
            }
        }
    }
    Ok(addrs)
}

/// Why a host name must not be reached, or `None`. Letter case and trailing dots do not matter.
fn name_reason(name: &str) -> Option<String> {
    let lower = trim_dot(name).to_ascii_lowercase();
    if METADATA_NAMES.contains(&lower.as_str()) {
        return Some(format!("{lower} is a cloud metadata host name"));
    }
    if LOOPBACK_NAMES.contains(&lower.as_str()) || lower.ends_with(".localhost") {
        return Some(format!("{lower} is a name for this machine (loopback)"));
    }
    None
}

/// The resolver inside a guarded client. reqwest connects only to what it returns.
struct GuardedResolver {
    /// `Some` in the client for admitted URLs: admitted names skip the range check there.
    admitted: Option<Arc<Admitted>>,
}

impl Resolve for GuardedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let name = name.as_str().to_owned();
        let admitted = self.admitted.clone();
        Box::pin(async move {
            let skip = admitted.as_ref().is_some_and(|a| a.admits_name(&name));
            let exactly = admitted.as_ref().is_some_and(|a| a.names_exactly(&name));
            let addrs = resolve_name(&name, 0, skip, exactly).await?;
            tracing::debug!(%name, count = addrs.len(), "resolved and checked");
            let addrs: Addrs = Box::new(addrs.into_iter());
            Ok(addrs)
        })
    }
}

fn guarded_client(resolver: GuardedResolver) -> Result<reqwest::Client> {
    crate::install_crypto();
    base_builder()
        .dns_resolver(resolver)
        .build()
        .map_err(|e| Error::Client(e.to_string()))
}

/// What every Purko client shares: no proxy from the environment (a proxy would resolve and
/// connect on its own), and no automatic redirects (each hop is checked by hand).
pub(crate) fn base_builder() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .redirect(reqwest::redirect::Policy::none())
        .referer(false)
}

/// Where the authority (user information, host, port) sits in `url`: after the scheme's colon
/// and any slashes or backslashes, up to the path, query or fragment.
fn authority_range(url: &str) -> std::ops::Range<usize> {
    let lead = url.len() - url.trim_start_matches(|c: char| c <= ' ').len();
    let Some(colon) = url[lead..].find(':') else {
        return lead..lead;
    };
    let after = lead + colon + 1;
    let start = url.len() - url[after..].trim_start_matches(['/', '\\']).len();
    // A backslash ends the authority for the WHATWG parser but not for others: an '@' after one
    // is still refused, so no parser differential can hide user information.
    let end = url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i);
    start..end
}

fn raw_authority(url: &str) -> &str {
    &url[authority_range(url)]
}

/// `url` with whatever sits before the last `@` of its authority removed.
fn without_userinfo(url: &str) -> String {
    let range = authority_range(url);
    match url[range.clone()].rfind('@') {
        Some(at) => format!("{}{}", &url[..range.start], &url[range.start + at + 1..]),
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests;
