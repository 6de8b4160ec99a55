//! Filling a URL template with the model's arguments.
//!
//! Each placeholder value is percent-encoded as one path segment (everything but letters,
//! digits and `-._~`), so a value can add no path segment, query, fragment, user information or host.
//! A segment that would come out as `.` or `..` is refused: URL parsers (and servers) treat
//! `%2E%2E` as `..`, so no encoding keeps it from climbing.

#![allow(
    clippy::result_large_err,
    reason = "a refusal is the observation itself, made once per call; boxing buys nothing"
)]

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, utf8_percent_encode};
use purko_protocol::{Code, Observation};
use serde_json::Value;
use url::{Origin, Url};

use super::ApiRequest;

/// Everything but RFC 3986's unreserved characters.
const SEGMENT: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Piece<'t> {
    Literal(&'t str),
    Placeholder(&'t str),
}

/// Splits a template into literal text and `{name}` placeholders. A brace that does not close
/// a non-empty name without braces or slashes stays literal.
pub(super) fn pieces(template: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        let close = after.find('}').filter(|&close| {
            let name = &after[..close];
            !name.is_empty() && !name.contains(['{', '/', ' '])
        });
        if let Some(close) = close {
            if open > 0 {
                out.push(Piece::Literal(&rest[..open]));
            }
            out.push(Piece::Placeholder(&after[..close]));
            rest = &after[close + 1..];
        } else {
            out.push(Piece::Literal(&rest[..=open]));
            rest = after;
        }
    }
    if !rest.is_empty() {
        out.push(Piece::Literal(rest));
    }
    out
}

/// Where a call goes.
#[derive(Debug)]
pub(super) struct Target {
    pub url: Url,
    /// The operator's fixed origin, when the template has one; hops elsewhere are guarded.
    pub trusted: Option<Origin>,
    /// Arguments used in the URL; they are not sent again as query or body.
    pub used: Vec<String>,
}

pub(super) fn fill(request: &ApiRequest<'_>) -> Result<Target, Observation> {
    let tool = request.tool;
    if let Some(name) = tool.whole_url_argument() {
        let Some(Value::String(raw)) = request.arguments.get(name) else {
            return Err(invalid(
                format!("argument '{name}' must be a string holding an http or https URL"),
                format!(
                    "call {} again with '{name}' set to the full URL to fetch",
                    tool.name
                ),
            ));
        };
        let url = request
            .egress
            .check(raw)
            .map_err(|blocked| super::answer::blocked(tool, &blocked))?;
        return Ok(Target {
            url,
            trusted: None,
            used: vec![name.to_owned()],
        });
    }

    let authority_end = authority_end(&tool.url);
    let mut text = String::with_capacity(tool.url.len());
    let mut used = Vec::new();
    let mut in_authority = false;
    let mut offset = 0;
    for piece in pieces(&tool.url) {
        match piece {
            Piece::Literal(literal) => {
                text.push_str(literal);
                offset += literal.len();
            }
            Piece::Placeholder(name) => {
                in_authority |= offset < authority_end;
                offset += name.len() + 2;
                let value = value_text(tool, name, request.arguments.get(name))?;
                text.extend(utf8_percent_encode(&value, SEGMENT));
                if !used.iter().any(|u| u == name) {
                    used.push(name.to_owned());
                }
            }
        }
    }
    refuse_dot_segments(&tool.url, &text, tool)?;
    let url = Url::parse(&text).map_err(|_| {
        if Url::parse(&tool.url.replace(['{', '}'], "")).is_err() {
            Observation::error(
                Code::Internal,
                format!("the URL template of tool {} is not a valid URL", tool.name),
                "tell the operator; the tool's configuration needs fixing",
            )
        } else {
            invalid(
                format!("the arguments of {} do not form a valid URL", tool.name),
                format!(
                    "call {} again with plainer values for {}",
                    tool.name,
                    used.join(", ")
                ),
            )
        }
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(Observation::error(
            Code::Internal,
            format!("tool {} does not use an http or https URL", tool.name),
            "tell the operator; the tool's configuration needs fixing",
        ));
    }
    if in_authority {
        // The model chose part of the host: the URL is the model's, and guarded as such.
        let url = request
            .egress
            .check(url.as_str())
            .map_err(|blocked| super::answer::blocked(tool, &blocked))?;
        return Ok(Target {
            url,
            trusted: None,
            used,
        });
    }
    let trusted = Some(url.origin());
    Ok(Target { url, trusted, used })
}

fn value_text(
    tool: &super::ApiTool,
    name: &str,
    value: Option<&Value>,
) -> Result<String, Observation> {
    let text = match value {
        None | Some(Value::Null) => {
            return Err(invalid(
                format!(
                    "argument '{name}' is missing; {} needs it to build its URL",
                    tool.name
                ),
                format!("call {} again with '{name}' set", tool.name),
            ));
        }
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    if text.is_empty() {
        return Err(invalid(
            format!(
                "argument '{name}' is empty; {} needs it to build its URL",
                tool.name
            ),
            format!("call {} again with a non-empty '{name}'", tool.name),
        ));
    }
    Ok(text)
}

/// Refuses a filled path segment that reads `.` or `..` where the template had a placeholder.
fn refuse_dot_segments(
    template: &str,
    filled: &str,
    tool: &super::ApiTool,
) -> Result<(), Observation> {
    let template_path = path_of(template);
    let filled_path = path_of(filled);
    for (t, f) in template_path.split('/').zip(filled_path.split('/')) {
        if !t.contains('{') {
            continue;
        }
        let decoded = percent_decode_str(f).decode_utf8_lossy();
        if decoded == "." || decoded == ".." {
            let names: Vec<&str> = pieces(t)
                .into_iter()
                .filter_map(|p| match p {
                    Piece::Placeholder(name) => Some(name),
                    Piece::Literal(_) => None,
                })
                .collect();
            return Err(invalid(
                format!(
                    "argument '{}' would make the path segment '{decoded}', which changes the URL's path",
                    names.join("', '")
                ),
                format!(
                    "call {} again with a real value for '{}'",
                    tool.name,
                    names.join("', '")
                ),
            ));
        }
    }
    Ok(())
}

/// The path part of a URL string (after the authority, before `?` or `#`).
fn path_of(url: &str) -> &str {
    let rest = &url[authority_end(url)..];
    &rest[..rest.find(['?', '#']).unwrap_or(rest.len())]
}

/// Byte offset where the authority of `url` ends (the path, query or fragment starts).
fn authority_end(url: &str) -> usize {
    let start = url.find("://").map_or(0, |i| i + 3);
    url[start..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| start + i)
}

fn invalid(message: String, remediation: String) -> Observation {
    Observation::error(Code::ValidationFailed, message, remediation)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn templates_split_into_pieces() {
        assert_eq!(
            pieces("https://x/{a}/b{c}?q={d}&{}"),
            vec![
                Piece::Literal("https://x/"),
                Piece::Placeholder("a"),
                Piece::Literal("/b"),
                Piece::Placeholder("c"),
                Piece::Literal("?q="),
                Piece::Placeholder("d"),
                Piece::Literal("&{"),
                Piece::Literal("}"),
            ]
        );
    }

    #[test]
    fn the_segment_set_leaves_only_unreserved_characters() {
        let encoded: String =
            utf8_percent_encode("a/b?c#d%e@f:g[h]i\\j k.l~m_n-o", SEGMENT).collect();
        assert_eq!(encoded, "a%2Fb%3Fc%23d%25e%40f%3Ag%5Bh%5Di%5Cj%20k.l~m_n-o");
    }
}
