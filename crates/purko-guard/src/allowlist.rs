//! The destination allow list of a `sends_out` tool (`destinations.allow`).
//!
//! Patterns are matched by the structure of what they name, not as raw text, so that a glob can
//! never reach across a boundary it did not mean to: a URL pattern matches scheme, host and path
//! apart (`https://*.slack.com/*` does not match `https://evil.com/.slack.com/`), an e-mail
//! pattern matches the local part and the domain apart, and a value that holds several
//! addresses (`a@x.com, b@y.com`) passes only when every one of them does. URLs with
//! credentials in them never match.

use url::Url;

use crate::error::{Error, Result};
use crate::glob::Glob;

/// One compiled allow-list pattern.
#[derive(Clone, Debug)]
pub struct DestinationPattern {
    text: String,
    shape: Shape,
}

#[derive(Clone, Debug)]
enum Shape {
    Anything,
    Url {
        scheme: String,
        host: Glob,
        port: Option<u16>,
        rest: Glob,
    },
    Email {
        local: Glob,
        domain: Glob,
    },
    Host(Glob),
    Plain(Glob),
}

impl DestinationPattern {
    pub fn parse(text: &str) -> Result<Self> {
        let bad = |why: String| Error::Pattern {
            pattern: text.to_owned(),
            why,
        };
        let trimmed = text.trim();
        let shape = if trimmed == "*" {
            Shape::Anything
        } else if let Some((scheme, rest)) = trimmed.split_once("://") {
            let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
            if authority.contains('@') {
                return Err(bad("a URL pattern must not hold credentials".into()));
            }
            let (host, port) = match authority.rsplit_once(':') {
                Some((host, port)) if !host.ends_with(']') || port.is_empty() => {
                    let port = port
                        .parse()
                        .map_err(|_| bad(format!("'{port}' is not a port")))?;
                    (host, Some(port))
                }
                _ => (authority, None),
            };
            if host.is_empty() {
                return Err(bad(
                    "a URL pattern needs a host, such as https://hooks.example.com/*".into(),
                ));
            }
            let path = if path.is_empty() { "/" } else { path };
            Shape::Url {
                scheme: scheme.to_ascii_lowercase(),
                host: Glob::new(host, true).map_err(bad)?,
                port,
                rest: Glob::new(path, false).map_err(bad)?,
            }
        } else if let Some((local, domain)) = trimmed.rsplit_once('@') {
            if local.is_empty() || domain.is_empty() {
                return Err(bad(
                    "an e-mail pattern needs both sides of '@', such as *@example.com".into(),
                ));
            }
            Shape::Email {
                local: Glob::new(local, true).map_err(bad)?,
                domain: Glob::new(domain, true).map_err(bad)?,
            }
        } else if trimmed.contains('.') && !trimmed.contains(['/', ' ']) {
            Shape::Host(Glob::new(trimmed, true).map_err(bad)?)
        } else {
            Shape::Plain(Glob::new(trimmed, false).map_err(bad)?)
        };
        Ok(Self {
            text: text.to_owned(),
            shape,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    fn matches(&self, candidate: &Candidate<'_>) -> bool {
        match (&self.shape, candidate) {
            (Shape::Anything, _) => true,
            (
                Shape::Url {
                    scheme,
                    host,
                    port,
                    rest,
                },
                Candidate::Url(url),
            ) => {
                url.scheme() == scheme
                    && url.host_str().is_some_and(|h| host.is_match(h))
                    && port.is_none_or(|p| url.port_or_known_default() == Some(p))
                    && rest.is_match(&path_and_query(url))
            }
            (
                Shape::Email { local, domain },
                Candidate::Email {
                    local: l,
                    domain: d,
                },
            ) => local.is_match(l) && domain.is_match(d),
            (Shape::Host(host), Candidate::Url(url)) => {
                url.host_str().is_some_and(|h| host.is_match(h))
            }
            (Shape::Host(host), Candidate::Email { domain, .. }) => host.is_match(domain),
            (Shape::Plain(glob), Candidate::Other(text)) => glob.is_match(text),
            _ => false,
        }
    }
}

fn path_and_query(url: &Url) -> String {
    match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    }
}

enum Candidate<'a> {
    Url(Url),
    Email {
        local: &'a str,
        domain: &'a str,
    },
    Other(&'a str),
    /// Looks like a URL or an address but does not parse as one, or holds credentials.
    Malformed,
}

fn candidate(piece: &str) -> Candidate<'_> {
    if piece.contains("://") {
        return match Url::parse(piece) {
            Ok(url) if url.username().is_empty() && url.password().is_none() => Candidate::Url(url),
            _ => Candidate::Malformed,
        };
    }
    let piece = piece.strip_prefix("mailto:").unwrap_or(piece);
    if let Some((local, domain)) = piece.rsplit_once('@') {
        let local = local.trim_matches(['<', '"']);
        let domain = domain.trim_end_matches('>');
        if local.is_empty()
            || domain.is_empty()
            || local.contains('@')
            || domain.contains(['/', '?', '#'])
        {
            return Candidate::Malformed;
        }
        return Candidate::Email { local, domain };
    }
    Candidate::Other(piece)
}

/// The compiled allow list.
#[derive(Clone, Debug, Default)]
pub struct AllowList {
    patterns: Vec<DestinationPattern>,
}

impl AllowList {
    pub fn new(patterns: Vec<DestinationPattern>) -> Self {
        Self { patterns }
    }

    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    pub fn patterns(&self) -> &[DestinationPattern] {
        &self.patterns
    }

    /// The pattern that allows every address in `value`, or `None` when some address is not
    /// allowed. A value with several addresses reports the pattern of its first one.
    pub fn allows(&self, value: &str) -> Option<&DestinationPattern> {
        let mut first = None;
        let mut any = false;
        for piece in split_addresses(value) {
            any = true;
            let candidate = candidate(piece);
            let pattern = self.patterns.iter().find(|p| p.matches(&candidate))?;
            first.get_or_insert(pattern);
        }
        if any { first } else { None }
    }
}

/// Splits `"Ann <a@x.com>, b@y.com; c@z.com"` into its addresses, dropping display names;
/// other values (`+55 11 9999-0000, #alerts`) split only at commas, semicolons and lines.
fn split_addresses(value: &str) -> Vec<&str> {
    let addressy = |p: &&str| p.contains('@') || p.contains("://");
    if value.contains('@') || value.contains("://") {
        value
            .split([',', ';', '\n', '\t', ' '])
            .map(str::trim)
            .filter(addressy)
            .collect()
    } else {
        value
            .split([',', ';', '\n'])
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(patterns: &[&str]) -> AllowList {
        AllowList::new(
            patterns
                .iter()
                .map(|p| DestinationPattern::parse(p).unwrap())
                .collect(),
        )
    }

    #[test]
    fn email_patterns_match_local_part_and_domain_apart() {
        let allow = list(&["*@mycompany.com"]);
        assert!(allow.allows("ann@mycompany.com").is_some());
        assert!(allow.allows("Ann@MyCompany.com").is_some());
        assert!(
            allow
                .allows("ann@mycompany.com, bob@mycompany.com")
                .is_some()
        );
        assert!(allow.allows("ann@mycompany.com, eve@evil.com").is_none());
        assert!(allow.allows("eve@evil.com@mycompany.com").is_none());
        assert!(allow.allows("eve@mycompany.com.evil.com").is_none());
        assert!(allow.allows("Ann Smith <ann@mycompany.com>").is_some());
        assert!(allow.allows("").is_none());
    }

    #[test]
    fn url_patterns_match_scheme_host_and_path_apart() {
        let allow = list(&[
            "https://hooks.slack.com/services/T000/*",
            "https://*.example.org/*",
        ]);
        assert!(
            allow
                .allows("https://hooks.slack.com/services/T000/B1/xyz")
                .is_some()
        );
        assert!(allow.allows("https://api.example.org/v1?q=1").is_some());
        for refused in [
            "http://hooks.slack.com/services/T000/B1",
            "https://hooks.slack.com/services/T999/B1",
            "https://hooks.slack.com@evil.com/services/T000/x",
            "https://evil.com/.example.org/",
            "https://user:pw@hooks.slack.com/services/T000/x",
            "https://hooks.slack.com/services/T000/../../T999/x",
            "not a url://",
        ] {
            assert!(allow.allows(refused).is_none(), "{refused} was allowed");
        }
    }

    #[test]
    fn host_patterns_cover_urls_and_mail_domains() {
        let allow = list(&["*.mycompany.com"]);
        assert!(allow.allows("https://wiki.mycompany.com/page").is_some());
        assert!(allow.allows("ann@eu.mycompany.com").is_some());
        assert!(allow.allows("https://mycompany.com.evil.net/").is_none());
    }

    #[test]
    fn plain_patterns_match_other_destinations() {
        let allow = list(&["+5511*", "#alerts"]);
        assert!(allow.allows("+5511999990000").is_some());
        assert!(allow.allows("#alerts").is_some());
        assert!(allow.allows("+1555").is_none());
    }

    #[test]
    fn malformed_patterns_are_refused_with_the_reason() {
        for bad in [
            "https://",
            "@example.com",
            "https://a@b.com/",
            "https://host:port/",
        ] {
            assert!(DestinationPattern::parse(bad).is_err(), "{bad}");
        }
    }
}
