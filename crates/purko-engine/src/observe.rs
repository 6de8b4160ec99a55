//! The observe step: what leaves Purko for the model is capped in size and carries no secret.

use purko_protocol::Observation;
use serde_json::Value;

const REDACTED: &str = "[redacted]";

/// Removes every secret from the observation's text and cuts its payload to `max_bytes`.
pub fn observe(mut observation: Observation, secrets: &[String], max_bytes: usize) -> Observation {
    if !secrets.is_empty() {
        if let Some(value) = observation.observation.as_mut() {
            redact_value(value, secrets);
        }
        for text in [&mut observation.message, &mut observation.remediation]
            .into_iter()
            .flatten()
        {
            *text = redact(text, secrets);
        }
    }
    if let Some(value) = observation.observation.take() {
        let (value, cut) = cap(value, max_bytes);
        observation.observation = Some(value);
        observation.truncated |= cut;
    }
    observation
}

/// Secrets shorter than this are replaced only where they stand alone (not inside a longer
/// word): a one-letter "credential" would otherwise mangle every word that holds the letter.
const SHORT_SECRET: usize = 8;

/// Replaces each secret in `text`.
pub fn redact(text: &str, secrets: &[String]) -> String {
    let mut out = text.to_owned();
    for secret in secrets.iter().filter(|s| !s.is_empty()) {
        if !out.contains(secret.as_str()) {
            continue;
        }
        out = if secret.len() >= SHORT_SECRET {
            out.replace(secret.as_str(), REDACTED)
        } else {
            replace_standalone(&out, secret)
        };
    }
    out
}

/// `text` with every occurrence of `secret` that no letter or digit touches replaced.
fn replace_standalone(text: &str, secret: &str) -> String {
    let word = |c: Option<char>| c.is_some_and(char::is_alphanumeric);
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    for (at, _) in text.match_indices(secret) {
        if at < last {
            continue;
        }
        let before = text[..at].chars().next_back();
        let after = text[at + secret.len()..].chars().next();
        if word(before) || word(after) {
            continue;
        }
        out.push_str(&text[last..at]);
        out.push_str(REDACTED);
        last = at + secret.len();
    }
    out.push_str(&text[last..]);
    out
}

fn redact_value(value: &mut Value, secrets: &[String]) {
    match value {
        Value::String(s)
            if secrets
                .iter()
                .any(|x| !x.is_empty() && s.contains(x.as_str())) =>
        {
            *s = redact(s, secrets);
        }
        Value::Array(items) => items.iter_mut().for_each(|v| redact_value(v, secrets)),
        Value::Object(map) => {
            for v in map.values_mut() {
                redact_value(v, secrets);
            }
        }
        _ => {}
    }
}

/// Keeps a payload within `max_bytes` of JSON text. A payload over the limit becomes its JSON
/// text cut at a character boundary, so the model still sees its beginning.
fn cap(value: Value, max_bytes: usize) -> (Value, bool) {
    let text = match &value {
        Value::String(s) if s.len() <= max_bytes => return (value, false),
        Value::String(s) => s.clone(),
        other => {
            let text = serde_json::to_string(other).unwrap_or_default();
            if text.len() <= max_bytes {
                return (value, false);
            }
            text
        }
    };
    let mut end = max_bytes.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (Value::String(text[..end].to_owned()), true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn secrets_are_redacted_everywhere() {
        let mut o = Observation::success(json!({"echo": ["Bearer s3cr3t", {"k": "s3cr3t!"}]}));
        o.message = Some("token s3cr3t refused".into());
        let o = observe(o, &["s3cr3t".into()], 10_000);
        assert_eq!(
            o.observation,
            Some(json!({"echo": ["Bearer [redacted]", {"k": "[redacted]!"}]}))
        );
        assert_eq!(o.message.as_deref(), Some("token [redacted] refused"));
    }

    #[test]
    fn a_short_secret_is_redacted_where_it_stands_alone_not_inside_words() {
        let secrets = ["x".to_owned()];
        assert_eq!(
            redact("The code exited: token=x, x", &secrets),
            "The code exited: token=[redacted], [redacted]"
        );
        assert_eq!(redact("xx x", &secrets), "xx [redacted]");
    }

    #[test]
    fn long_payloads_are_cut_and_marked() {
        let o = observe(Observation::success(json!("é".repeat(100))), &[], 11);
        assert_eq!(o.observation, Some(json!("ééééé")));
        assert!(o.truncated);
        let o = observe(Observation::success(json!({"a": "x".repeat(50)})), &[], 10);
        assert_eq!(o.observation, Some(json!("{\"a\":\"xxxx")));
        let o = observe(Observation::success(json!({"a": 1})), &[], 10);
        assert!(!o.truncated);
    }
}
