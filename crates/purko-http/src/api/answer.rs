//! Turning what came back (or did not) into an observation a model can act on: short
//! sentences, stable codes, the credential redacted everywhere, the body capped.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use purko_protocol::{Code, Observation};
use serde_json::{Value, json};

use super::ApiTool;
use crate::egress::{Blocked, ResolveError};

/// How much of an error body the model sees.
const SNIPPET_CHARS: usize = 300;
const REDACTED: &str = "[redacted]";

pub(super) fn blocked(tool: &ApiTool, blocked: &Blocked) -> Observation {
    Observation::error(
        Code::EgressBlocked,
        blocked.to_string(),
        format!(
            "call {} with a public http or https URL without user information; internal and \
             metadata addresses are reachable only when the operator admits them",
            tool.name
        ),
    )
}

/// Every spelling of the credential that could come back: as is, base64 (Basic), and the
/// password half of a Basic `user:password`.
#[derive(Debug, Default)]
pub(super) struct Redactor {
    needles: Vec<String>,
}

impl Redactor {
    pub(super) fn new(tool: &ApiTool) -> Self {
        let mut needles = Vec::new();
        if let Some(auth) = &tool.auth {
            let secret = auth.credential.expose();
            if !secret.is_empty() {
                needles.push(secret.to_owned());
                needles.push(base64::engine::general_purpose::STANDARD.encode(secret));
                if let Some((_, password)) = secret.split_once(':')
                    && password.len() >= 4
                {
                    needles.push(password.to_owned());
                }
            }
        }
        // Longest first, so a part never leaves the rest of a longer match behind.
        needles.sort_by_key(|n| std::cmp::Reverse(n.len()));
        Self { needles }
    }

    pub(super) fn text(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for needle in &self.needles {
            if out.contains(needle.as_str()) {
                out = out.replace(needle.as_str(), REDACTED);
            }
        }
        out
    }

    fn json(&self, value: Value) -> Value {
        match value {
            Value::String(s) => Value::String(self.text(&s)),
            Value::Array(items) => Value::Array(items.into_iter().map(|v| self.json(v)).collect()),
            Value::Object(map) => Value::Object(
                map.into_iter()
                    .map(|(k, v)| (self.text(&k), self.json(v)))
                    .collect(),
            ),
            other => other,
        }
    }
}

/// A response read up to the cap.
#[derive(Debug)]
pub(super) struct Reply {
    pub status: u16,
    pub json: bool,
    pub retry_after: Option<String>,
    pub body: Vec<u8>,
    pub truncated: bool,
}

pub(super) fn observe(tool: &ApiTool, reply: &Reply, redactor: &Redactor) -> Observation {
    let text = redactor.text(&lossy(&reply.body));
    let status = reply.status;
    let mut observation = if status == 429 {
        let seconds = reply.retry_after.as_deref().and_then(retry_after_seconds);
        let wait = match seconds {
            Some(n) => format!("wait {n} seconds before calling {} again", tool.name),
            None => format!("wait a minute before calling {} again", tool.name),
        };
        let observation = Observation::error(
            Code::RateLimitExceeded,
            format!("{} is rate limited by its upstream (HTTP 429)", tool.name),
            wait,
        );
        match seconds {
            Some(n) => observation.with_retry_after(n),
            None => observation,
        }
    } else if status >= 500 {
        Observation::error(
            Code::UpstreamError,
            format!(
                "{} failed upstream with HTTP {status}{}",
                tool.name,
                snippet(&text)
            ),
            format!(
                "try {} again later; the service reported an error of its own",
                tool.name
            ),
        )
    } else if status >= 400 {
        Observation::error(
            Code::UpstreamError,
            format!(
                "{} was refused upstream with HTTP {status}{}",
                tool.name,
                snippet(&text)
            ),
            format!(
                "check the arguments of {} against the error above and call it again with corrected values",
                tool.name
            ),
        )
    } else {
        Observation::success(success_body(status, reply, &text, redactor))
    };
    observation.truncated = reply.truncated;
    observation
}

fn success_body(status: u16, reply: &Reply, text: &str, redactor: &Redactor) -> Value {
    if !reply.json {
        return json!({"status": status, "body": text});
    }
    if reply.truncated {
        return json!({
            "status": status,
            "body": text,
            "note": "the JSON answer was longer than the limit and was cut, so it is given as text",
        });
    }
    match serde_json::from_slice::<Value>(&reply.body) {
        Ok(value) => json!({"status": status, "body": redactor.json(value)}),
        Err(_) => json!({
            "status": status,
            "body": text,
            "note": "the answer claimed to be JSON but did not parse, so it is given as text",
        }),
    }
}

/// `: <first characters of the body>`, or nothing for an empty body.
fn snippet(text: &str) -> String {
    let squeezed: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if squeezed.is_empty() {
        return String::new();
    }
    let mut cut: String = squeezed.chars().take(SNIPPET_CHARS).collect();
    if cut.len() < squeezed.len() {
        cut.push_str("...");
    }
    format!(": {cut}")
}

/// The bytes as text; an incomplete character at the cut end is dropped, not shown as U+FFFD.
fn lossy(bytes: &[u8]) -> String {
    let end = match std::str::from_utf8(bytes) {
        Err(e) if e.error_len().is_none() => e.valid_up_to(),
        Ok(_) | Err(_) => bytes.len(),
    };
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Seconds to wait from a `Retry-After` value: delta-seconds or an HTTP date.
pub(super) fn retry_after_seconds(value: &str) -> Option<u64> {
    let value = value.trim();
    if let Ok(seconds) = value.parse::<u64>() {
        return Some(seconds);
    }
    let at = http_date(value)?;
    let now = SystemTime::now().duration_since(UNIX_EPOCH).ok()?.as_secs();
    Some(at.saturating_sub(now))
}

/// Seconds since the epoch of an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the only
/// form RFC 9110 lets senders use.
fn http_date(value: &str) -> Option<u64> {
    let mut parts = value.split_whitespace();
    let _weekday = parts.next()?;
    let day: u64 = parts.next()?.parse().ok()?;
    let month_name = parts.next()?;
    let month = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ]
    .iter()
    .position(|m| m.eq_ignore_ascii_case(month_name))?;
    let year: i64 = parts.next()?.parse().ok()?;
    let mut clock = parts.next()?.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, s) = (clock.next()??, clock.next()??, clock.next()??);
    if parts.next()? != "GMT" || !(1..=31).contains(&day) || h > 23 || m > 59 || s > 60 {
        return None;
    }
    let days = days_from_civil(
        year,
        u32::try_from(month).ok()? + 1,
        u32::try_from(day).ok()?,
    );
    u64::try_from(days)
        .ok()
        .map(|d| d * 86_400 + h * 3_600 + m * 60 + s)
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (i64::from(month) + 9) % 12;
    let doy = (153 * mp + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// What a failed exchange tells the model; never a raw error chain.
pub(super) fn failure(tool: &ApiTool, error: &reqwest::Error, redactor: &Redactor) -> Observation {
    let origin = error.url().map_or_else(
        || "the upstream".into(),
        |u| redactor.text(&u.origin().ascii_serialization()),
    );
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(error);
    let mut refused = false;
    while let Some(e) = source {
        if let Some(resolve) = e.downcast_ref::<ResolveError>() {
            return match resolve {
                ResolveError::Blocked(reason) => Observation::error(
                    Code::EgressBlocked,
                    format!("Purko refused to connect to {origin}: {reason}."),
                    format!("call {} with a public http or https URL", tool.name),
                ),
                ResolveError::NotFound(name) => {
                    unavailable(tool, &format!("the name {name} could not be resolved"))
                }
            };
        }
        if let Some(io) = e.downcast_ref::<std::io::Error>() {
            refused |= io.kind() == std::io::ErrorKind::ConnectionRefused;
        }
        source = e.source();
    }
    if error.is_timeout() {
        return timeout(tool, None);
    }
    if refused {
        unavailable(tool, &format!("{origin} refused the connection"))
    } else if error.is_connect() {
        unavailable(tool, &format!("could not connect to {origin}"))
    } else if error.is_body() || error.is_decode() {
        Observation::error(
            Code::UpstreamError,
            format!("the answer of {origin} to {} broke off", tool.name),
            format!("try {} again", tool.name),
        )
    } else {
        unavailable(
            tool,
            &format!("the request to {origin} failed before an answer came"),
        )
    }
}

pub(super) fn unavailable(tool: &ApiTool, what: &str) -> Observation {
    Observation::error(
        Code::UpstreamUnavailable,
        format!("{} could not reach its service: {what}", tool.name),
        format!(
            "try {} again later; if it keeps failing, the service may be down",
            tool.name
        ),
    )
}

pub(super) fn timeout(tool: &ApiTool, limit: Option<Duration>) -> Observation {
    let within = limit
        .map(|d| format!(" within {:.1} seconds", d.as_secs_f64()))
        .unwrap_or_default();
    Observation::error(
        Code::UpstreamTimeout,
        format!("{} got no complete answer{within}", tool.name),
        format!("try {} again later, or with a smaller request", tool.name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn http_dates_become_epoch_seconds() {
        assert_eq!(
            http_date("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(784_111_777)
        );
        assert_eq!(http_date("Thu, 01 Jan 1970 00:00:00 GMT"), Some(0));
        assert_eq!(http_date("Sunday, 06-Nov-94 08:49:37 GMT"), None);
        assert_eq!(retry_after_seconds(" 120 "), Some(120));
        assert_eq!(
            retry_after_seconds("Sun, 06 Nov 1994 08:49:37 GMT"),
            Some(0)
        );
        assert_eq!(retry_after_seconds("soon"), None);
    }

    #[test]
    fn a_cut_character_is_dropped() {
        assert_eq!(lossy("ab\u{e9}".as_bytes()), "ab\u{e9}");
        assert_eq!(lossy(&"ab\u{e9}".as_bytes()[..3]), "ab");
    }

    #[test]
    fn snippets_are_short_and_single_line() {
        assert_eq!(snippet(""), "");
        assert_eq!(snippet("a\n  b"), ": a b");
        assert_eq!(snippet(&"x".repeat(400)).len(), 2 + SNIPPET_CHARS + 3);
    }
}
