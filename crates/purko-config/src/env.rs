//! The one place of Purko that reads the process environment (STYLE.md): the state folder, the
//! two bearer tokens, and the variables that `secretRef: {env: ...}` names. Everything else is
//! handed what it needs, so it can be tested without touching the environment.

use std::ffi::OsString;
use std::fmt;
use std::path::PathBuf;

/// Overrides the state folder.
pub const PURKO_HOME: &str = "PURKO_HOME";
/// The token that may approve calls and read everything.
pub const PURKO_OPERATOR_TOKEN: &str = "PURKO_OPERATOR_TOKEN";
/// The token agents call tools with; it can never approve.
pub const PURKO_AGENT_TOKEN: &str = "PURKO_AGENT_TOKEN";

/// What Purko takes from its environment. `Debug` never shows a token.
#[derive(Clone, PartialEq, Eq)]
pub struct Environment {
    /// `PURKO_HOME`, or `.purko` in the working folder.
    pub home: PathBuf,
    /// `PURKO_OPERATOR_TOKEN`, when set and not empty.
    pub operator_token: Option<String>,
    /// `PURKO_AGENT_TOKEN`, when set and not empty.
    pub agent_token: Option<String>,
}

impl Environment {
    /// Reads the process environment.
    #[expect(
        clippy::disallowed_methods,
        reason = "this module is where Purko reads its environment"
    )]
    pub fn from_process() -> Self {
        Self::from_lookup(|name| std::env::var_os(name))
    }

    /// Reads the variables through `lookup`, for tests and embedders.
    pub fn from_lookup(lookup: impl Fn(&str) -> Option<OsString>) -> Self {
        let text = |name: &str| {
            lookup(name)
                .and_then(|value| value.into_string().ok())
                .filter(|value| !value.is_empty())
        };
        Self {
            home: lookup(PURKO_HOME)
                .filter(|value| !value.is_empty())
                .map_or_else(|| PathBuf::from(".purko"), PathBuf::from),
            operator_token: text(PURKO_OPERATOR_TOKEN),
            agent_token: text(PURKO_AGENT_TOKEN),
        }
    }
}

impl fmt::Debug for Environment {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shown = |token: &Option<String>| token.as_ref().map(|_| "<set>");
        f.debug_struct("Environment")
            .field("home", &self.home)
            .field("operator_token", &shown(&self.operator_token))
            .field("agent_token", &shown(&self.agent_token))
            .finish()
    }
}

/// A variable's value for a secret, or why there is none.
#[expect(
    clippy::disallowed_methods,
    reason = "this module is where Purko reads its environment"
)]
pub(crate) fn secret_var(name: &str) -> Result<String, &'static str> {
    match std::env::var(name) {
        Ok(value) => Ok(value),
        Err(std::env::VarError::NotPresent) => Err("not set"),
        Err(std::env::VarError::NotUnicode(_)) => Err("not valid UTF-8"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn defaults_apply_when_nothing_is_set_and_empty_tokens_count_as_unset() {
        let env = Environment::from_lookup(|name| {
            (name == PURKO_OPERATOR_TOKEN).then(|| OsString::from(""))
        });
        assert_eq!(
            env,
            Environment {
                home: PathBuf::from(".purko"),
                operator_token: None,
                agent_token: None,
            }
        );
    }

    #[test]
    fn variables_are_read_and_tokens_never_shown() {
        let env = Environment::from_lookup(|name| match name {
            PURKO_HOME => Some("/var/lib/purko".into()),
            PURKO_OPERATOR_TOKEN => Some("op-s3cret".into()),
            PURKO_AGENT_TOKEN => Some("agent-s3cret".into()),
            _ => None,
        });
        assert_eq!(env.home, PathBuf::from("/var/lib/purko"));
        assert_eq!(env.operator_token.as_deref(), Some("op-s3cret"));
        assert_eq!(env.agent_token.as_deref(), Some("agent-s3cret"));
        let debug = format!("{env:?}");
        assert!(!debug.contains("s3cret"), "{debug}");
    }
}
