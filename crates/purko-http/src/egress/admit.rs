//! The operator's `destinations.allow` patterns, as far as they concern HTTP.
//!
//! An admitted URL skips the address-range check (an operator may name an internal host), never
//! the scheme and userinfo checks. Admission only ever loosens the guard for what the operator
//! spelled out: a bare `*` or any other glob that is not a leading `*.` admits nothing here, and
//! e-mail patterns admit nothing for HTTP.

use url::{Host, Url};

use crate::error::Error;

/// A host as the operator wrote it: exactly, or every name under a suffix (`*.example.com`).
#[derive(Clone, Debug, PartialEq, Eq)]
enum HostPattern {
    Exact(Host<String>),
    Under(String),
}

impl HostPattern {
    fn parse(text: &str, pattern: &str) -> Result<Self, Error> {
        if let Some(suffix) = text.strip_prefix("*.") {
            let Ok(Host::Domain(suffix)) = Host::parse(suffix) else {
                return Err(bad(pattern, "a wildcard host must be *.<domain name>"));
            };
            return Ok(Self::Under(trim_dot(&suffix).to_owned()));
        }
        match Host::parse(text) {
            Ok(Host::Domain(name)) => Ok(Self::Exact(Host::Domain(trim_dot(&name).to_owned()))),
            Ok(host) => Ok(Self::Exact(host)),
            Err(e) => Err(bad(pattern, &format!("'{text}' is not a host name ({e})"))),
        }
    }

    fn matches(&self, host: &Host<&str>) -> bool {
        match (self, host) {
            (Self::Exact(Host::Domain(want)), Host::Domain(name)) => want == trim_dot(name),
            (Self::Exact(Host::Ipv4(want)), Host::Ipv4(ip)) => want == ip,
            (Self::Exact(Host::Ipv6(want)), Host::Ipv6(ip)) => want == ip,
            (Self::Under(suffix), Host::Domain(name)) => trim_dot(name)
                .strip_suffix(suffix.as_str())
                .is_some_and(|head| head.len() > 1 && head.ends_with('.')),
            _ => false,
        }
    }

    fn is_exact_name(&self, name: &str) -> bool {
        matches!(self, Self::Exact(Host::Domain(want)) if want == trim_dot(name))
    }
}

#[derive(Clone, Debug)]
enum Pattern {
    /// `api.example.com`, `*.example.com`, `127.0.0.1:8080`, `[::1]:9000`.
    Host {
        host: HostPattern,
        port: Option<u16>,
    },
    /// `https://hooks.example.com/services/*`: scheme, host and port exact, path a prefix when
    /// the pattern ends in `*`, else exact.
    Url {
        scheme: String,
        host: HostPattern,
        port: Option<u16>,
        path: String,
        prefix: bool,
    },
}

/// The compiled HTTP side of an agent's allow list.
#[derive(Clone, Debug, Default)]
pub(crate) struct Admitted {
    patterns: Vec<Pattern>,
}

impl Admitted {
    pub(crate) fn new(admitted: &[String]) -> Result<Self, Error> {
        let mut patterns = Vec::new();
        for text in admitted {
            if let Some(pattern) = parse(text.trim(), text)? {
                patterns.push(pattern);
            }
        }
        Ok(Self { patterns })
    }

    /// Whether the operator admitted this very URL (host, port and path).
    pub(crate) fn admits(&self, url: &Url) -> bool {
        let (Some(host), Some(port)) = (url.host(), url.port_or_known_default()) else {
            return false;
        };
        self.patterns.iter().any(|pattern| match pattern {
            Pattern::Host {
                host: want,
                port: want_port,
            } => want.matches(&host) && want_port.is_none_or(|p| p == port),
            Pattern::Url {
                scheme,
                host: want,
                port: want_port,
                path,
                prefix,
            } => {
                url.scheme() == scheme
                    && want.matches(&host)
                    && want_port.unwrap_or_else(|| default_port(scheme)) == port
                    && if *prefix {
                        url.path().starts_with(path.as_str())
                    } else {
                        url.path() == path
                    }
            }
        })
    }

    /// Whether some pattern admits this host name on some port (what a resolver can know).
    pub(crate) fn admits_name(&self, name: &str) -> bool {
        let host = Host::Domain(name);
        self.patterns.iter().any(|pattern| match pattern {
            Pattern::Host { host: want, .. } | Pattern::Url { host: want, .. } => {
                want.matches(&host)
            }
        })
    }

    /// Whether the operator wrote exactly this name (not through a wildcard): only then may a
    /// metadata or loopback host name be reached.
    pub(crate) fn names_exactly(&self, name: &str) -> bool {
        self.patterns.iter().any(|pattern| match pattern {
            Pattern::Host { host, .. } | Pattern::Url { host, .. } => host.is_exact_name(name),
        })
    }
}

fn parse(text: &str, pattern: &str) -> Result<Option<Pattern>, Error> {
    if let Some((scheme, rest)) = text.split_once("://") {
        let scheme = scheme.to_ascii_lowercase();
        if scheme != "http" && scheme != "https" {
            return Ok(None);
        }
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        if authority.contains('@') {
            return Err(bad(pattern, "a URL pattern must not hold credentials"));
        }
        let (host, port) = split_port(authority, pattern)?;
        let path = if path.is_empty() { "/" } else { path };
        let (path, prefix) = match path.strip_suffix('*') {
            Some(head) => (head, true),
            None => (path, false),
        };
        if path.contains('*') {
            return Ok(None);
        }
        // Let the URL parser normalise the path the way it will normalise the URLs it is
        // compared with (percent-encoding, dot segments).
        let parsed = Url::parse(&format!("{scheme}://host.invalid{path}"))
            .map_err(|e| bad(pattern, &format!("the path does not parse ({e})")))?;
        Ok(Some(Pattern::Url {
            host: HostPattern::parse(host, pattern)?,
            port,
            path: parsed.path().to_owned(),
            prefix,
            scheme,
        }))
    } else if text.contains('@') || text.contains('/') || text.is_empty() {
        Ok(None)
    } else {
        let (host, port) = split_port(text, pattern)?;
        let wildcard_elsewhere = host.strip_prefix("*.").unwrap_or(host).contains('*');
        if wildcard_elsewhere {
            return Ok(None);
        }
        Ok(Some(Pattern::Host {
            host: HostPattern::parse(host, pattern)?,
            port,
        }))
    }
}

/// `host:port`, `[v6]:port`, `host`, `[v6]`.
fn split_port<'a>(authority: &'a str, pattern: &str) -> Result<(&'a str, Option<u16>), Error> {
    let split = if authority.starts_with('[') {
        authority.find(']').map(|end| authority.split_at(end + 1))
    } else if authority.matches(':').count() == 1 {
        authority.find(':').map(|at| authority.split_at(at))
    } else {
        None
    };
    match split {
        Some((host, "")) => Ok((host, None)),
        Some((host, port)) => {
            let port = port.strip_prefix(':').unwrap_or(port);
            let port = port
                .parse()
                .map_err(|_| bad(pattern, &format!("'{port}' is not a port")))?;
            Ok((host, Some(port)))
        }
        None => Ok((authority, None)),
    }
}

fn default_port(scheme: &str) -> u16 {
    if scheme == "https" { 443 } else { 80 }
}

pub(crate) fn trim_dot(name: &str) -> &str {
    name.trim_end_matches('.')
}

fn bad(pattern: &str, why: &str) -> Error {
    Error::Pattern {
        pattern: pattern.to_owned(),
        why: why.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn admitted(patterns: &[&str]) -> Admitted {
        Admitted::new(&patterns.iter().map(|p| (*p).to_owned()).collect::<Vec<_>>())
            .expect("patterns")
    }

    fn url(text: &str) -> Url {
        Url::parse(text).expect("a url")
    }

    #[test]
    fn host_patterns_match_host_and_port() {
        let a = admitted(&[
            "api.example.com",
            "*.corp.example",
            "127.0.0.1:8080",
            "[::1]:9000",
        ]);
        assert!(a.admits(&url("https://api.example.com/x")));
        assert!(a.admits(&url("http://API.example.com./x")));
        assert!(a.admits(&url("http://a.b.corp.example/")));
        assert!(!a.admits(&url("http://corp.example/")));
        assert!(!a.admits(&url("http://evilcorp.example/")));
        assert!(a.admits(&url("http://127.0.0.1:8080/")));
        assert!(a.admits(&url("http://127.1:8080/")));
        assert!(!a.admits(&url("http://127.0.0.1:8081/")));
        assert!(!a.admits(&url("http://127.0.0.1/")));
        assert!(a.admits(&url("http://[::1]:9000/")));
        assert!(a.admits_name("x.corp.example"));
        assert!(!a.admits_name("corp.example.evil.com"));
    }

    #[test]
    fn url_patterns_match_a_path_prefix() {
        let a = admitted(&[
            "https://hooks.example.com/services/*",
            "http://10.0.0.5:81/api",
        ]);
        assert!(a.admits(&url("https://hooks.example.com/services/T1/B2")));
        assert!(!a.admits(&url("https://hooks.example.com/other")));
        assert!(!a.admits(&url("https://hooks.example.com/services/../other")));
        assert!(!a.admits(&url("http://hooks.example.com/services/T1")));
        assert!(a.admits(&url("http://10.0.0.5:81/api")));
        assert!(!a.admits(&url("http://10.0.0.5:81/api/more")));
    }

    #[test]
    fn mail_and_bare_globs_admit_nothing() {
        let a = admitted(&["*@example.com", "*", "*.*", "ex*.com"]);
        assert!(!a.admits(&url("http://example.com/")));
        assert!(!a.admits(&url("http://127.0.0.1/")));
        assert!(!a.admits_name("example.com"));
    }

    #[test]
    fn malformed_patterns_are_errors() {
        for bad in ["https://a@b.com/", "host:port", "https://exa mple.com/"] {
            assert!(Admitted::new(&[bad.to_owned()]).is_err(), "{bad}");
        }
    }
}
