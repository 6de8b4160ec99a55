//! Hardcoded secrets, shared by the Python and Go rules: by the value's shape (provider key
//! formats, private key blocks, credentials in URLs) and by the name it is bound to
//! (`password`, `api_key`, `token`, ...). Entropy only raises the confidence of a name match;
//! on its own it finds too many hashes and test vectors.

use std::sync::LazyLock;

use regex::{Regex, RegexSet};

/// Provider key formats: a match is a secret whatever its name.
const VALUE_PATTERNS: &[(&str, &str)] = &[
    (
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b",
        "an AWS access key id",
    ),
    (r"\bgh[pousr]_[A-Za-z0-9]{36,255}\b", "a GitHub token"),
    (
        r"\bgithub_pat_[A-Za-z0-9_]{60,255}\b",
        "a GitHub fine-grained token",
    ),
    (r"\bxox[abposr]-[A-Za-z0-9-]{10,250}", "a Slack token"),
    (
        r"https://hooks\.slack\.com/services/T[A-Za-z0-9_]{6,}/B[A-Za-z0-9_]{6,}/[A-Za-z0-9_]{20,}",
        "a Slack webhook URL",
    ),
    (
        r"\b(?:sk|rk)_live_[A-Za-z0-9]{20,99}\b",
        "a Stripe live key",
    ),
    (r"\bsk_test_[A-Za-z0-9]{20,99}\b", "a Stripe test key"),
    (r"\bAIza[0-9A-Za-z_-]{35}\b", "a Google API key"),
    (r"\bya29\.[0-9A-Za-z_-]{20,}", "a Google OAuth access token"),
    (
        r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}T3BlbkFJ[A-Za-z0-9_-]{20,}",
        "an OpenAI API key",
    ),
    (
        r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
        "an OpenAI API key",
    ),
    (
        r"\bsk-ant-(?:api|admin)[0-9]{2}-[A-Za-z0-9_-]{80,}",
        "an Anthropic API key",
    ),
    (
        r"-----BEGIN (?:RSA |EC |DSA |OPENSSH |ENCRYPTED |PGP )?PRIVATE KEY(?: BLOCK)?-----",
        "a private key",
    ),
    (r"\bglpat-[A-Za-z0-9_-]{20}\b", "a GitLab token"),
    (r"\bnpm_[A-Za-z0-9]{36}\b", "an npm token"),
    (
        r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b",
        "a SendGrid key",
    ),
];

static VALUES: LazyLock<RegexSet> = LazyLock::new(|| {
    #[expect(
        clippy::expect_used,
        reason = "the patterns are constants checked by the tests"
    )]
    RegexSet::new(VALUE_PATTERNS.iter().map(|(p, _)| format!("(?-u){p}")))
        .expect("secret patterns compile")
});

/// `scheme://user:password@host`, the password not a placeholder.
static URL_CREDENTIALS: LazyLock<Regex> = LazyLock::new(|| {
    #[expect(
        clippy::expect_used,
        reason = "a constant pattern checked by the tests"
    )]
    Regex::new(
        r"(?-u:\b)[a-zA-Z][a-zA-Z0-9+.-]{1,20}://([^/\s:@]{1,128}):([^/\s@]{1,256})@[A-Za-z0-9.-]",
    )
    .expect("URL credential pattern compiles")
});

static SECRET_NAME: LazyLock<Regex> = LazyLock::new(|| {
    #[expect(clippy::expect_used, reason = "a constant pattern checked by the tests")]
    Regex::new(
        r"(?i-u)(?:pas+wo?r?d|passphrase|\bpass\b|_pass\b|^pass_|pwd|secret|token|api_?key|apikey|access_?key|private_?key|client_?secret|credential|auth_?key|signing_?key)",
    )
    .expect("secret name pattern compiles")
});

/// Names that mention a secret without holding one.
static NOT_A_SECRET_NAME: LazyLock<Regex> = LazyLock::new(|| {
    #[expect(clippy::expect_used, reason = "a constant pattern checked by the tests")]
    Regex::new(
        r"(?i-u)(?:url|uri|file|path|dir|prompt|field|type|kind|name|label|length|len\b|size|min|max|count|header|param|policy|form|input|regex|pattern|format|prefix|suffix|endpoint|env|var|key_id|id$|_ids?\b|position|tokens?_(?:re|list|map|start|end)|tokeni[sz]|reset|hint|message|msg|error|expir|timeout|placeholder|template|description|help|state|status|mode|enabled|style|_chars?\b|separator|sep\b|delim)",
    )
    .expect("not-a-secret pattern compiles")
});

/// What a string value is, when its shape alone says it is a secret.
pub(crate) fn value_secret(value: &str) -> Option<&'static str> {
    if let Some(index) = VALUES.matches(value).iter().next() {
        return Some(VALUE_PATTERNS[index].1);
    }
    // The URL pattern is the costly one to build and run: only text that can match reaches it.
    if !(value.contains("://") && value.contains('@')) {
        return None;
    }
    let captures = URL_CREDENTIALS.captures(value)?;
    let password = captures.get(2)?.as_str();
    let placeholder = password.starts_with(['$', '<', '{', '%', '*'])
        || password.chars().all(|c| c == 'x' || c == 'X' || c == '*')
        || matches!(
            password.to_ascii_lowercase().as_str(),
            "password" | "pass" | "passwd" | "secret" | "pwd" | "changeme" | "****"
        );
    (!placeholder).then_some("a password in a URL")
}

/// Whether a name says its value is a secret.
pub(crate) fn secret_name(name: &str) -> bool {
    SECRET_NAME.is_match(name) && !NOT_A_SECRET_NAME.is_match(name)
}

static LEXER_TOKEN: LazyLock<Regex> = LazyLock::new(|| {
    #[expect(
        clippy::expect_used,
        reason = "a constant pattern checked by the tests"
    )]
    Regex::new(r"(?i-u)^_?(?:last|prev|next|cur|curr|this|the|first|new)?_?tokens?$")
        .expect("lexer token pattern compiles")
});

/// Whether `value` bound to `name` is a likely secret. A bare `token` is more often a lexer's
/// token than a credential: there, only a random-looking value counts.
pub(crate) fn secret_binding(name: &str, value: &str) -> bool {
    secret_name(name)
        && plausible_value(value)
        && value_secret(value).is_none()
        && (!LEXER_TOKEN.is_match(name) || high_entropy(value))
}

/// Whether a value bound to a secret name looks like one: not empty, not a prompt, template or
/// reference to somewhere else.
pub(crate) fn plausible_value(value: &str) -> bool {
    let trimmed = value.trim();
    !trimmed.is_empty()
        && trimmed.chars().any(char::is_alphanumeric)
        && trimmed.len() < 1024
        && !trimmed.ends_with([':', '?', '='])
        && !trimmed.contains(": ")
        && !trimmed.contains("%s")
        && !trimmed.contains("%(")
        && !trimmed.contains('{')
        && !trimmed.starts_with('$')
        && !trimmed.starts_with('<')
        && !trimmed.contains('\n')
        && !trimmed.contains("://")
        && !trimmed.starts_with('/')
        && !(trimmed.len() > 3 && trimmed.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
}

/// Shannon entropy in bits per character.
pub(crate) fn entropy(value: &str) -> f64 {
    let mut counts = [0u32; 256];
    let mut total = 0u32;
    for byte in value.bytes() {
        counts[usize::from(byte)] += 1;
        total += 1;
    }
    if total == 0 {
        return 0.0;
    }
    let total = f64::from(total);
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = f64::from(c) / total;
            -p * p.log2()
        })
        .sum()
}

/// A name match is sure when the value is also long and random-looking.
pub(crate) fn high_entropy(value: &str) -> bool {
    value.len() >= 16 && entropy(value) >= 3.5
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_compile_and_match_their_examples() {
        assert_eq!(
            value_secret("AKIAIOSFODNN7EXAMPLE"),
            Some("an AWS access key id")
        );
        assert_eq!(
            value_secret("ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            Some("a GitHub token")
        );
        assert_eq!(
            value_secret("postgres://admin:hunter2@db.internal/app"),
            Some("a password in a URL")
        );
        assert_eq!(value_secret("postgres://admin:${PW}@db/app"), None);
        assert_eq!(
            value_secret("-----BEGIN RSA PRIVATE KEY-----"),
            Some("a private key")
        );
        assert!(secret_name("DB_PASSWORD"));
        assert!(secret_name("api_key"));
        assert!(!secret_name("password_prompt"));
        assert!(!secret_name("token_type"));
        assert!(high_entropy("q8Zr2mT1x9KbW4pLs7Vd"));
        assert!(!high_entropy("aaaaaaaaaaaaaaaaaaaa"));
    }
}
