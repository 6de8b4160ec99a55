//! Rules and destination allow lists (DESIGN.md section 4): the `rules:` and `destinations:`
//! keys of an agent's guardrail.
//!
//! A rule matches a call when one of its tool globs matches the tool's name, its kinds (if any)
//! include the tool's kind, and every argument glob matches. For `deny` and `ask` an argument
//! holding a list matches when any item does; for `allow` only when every item does, so a list
//! can never smuggle one unmatched value through an allow.

use std::collections::BTreeMap;
use std::path::Path;

use purko_protocol::{Autonomy, Effect, Kind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::allowlist::{AllowList, DestinationPattern};
use crate::error::{Error, Location, Result};
use crate::glob::Glob;
use crate::kinds_file::hex;

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RawPolicy {
    #[serde(default)]
    pub rules: Vec<RawRule>,
    #[serde(default)]
    pub destinations: RawDestinations,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RawRule {
    pub effect: Effect,
    /// Tool globs; none means every tool.
    #[serde(default)]
    pub tools: Vec<String>,
    #[serde(default)]
    pub kinds: Vec<Kind>,
    /// Argument path (dotted) → glob.
    #[serde(default)]
    pub args: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(deny_unknown_fields)]
pub struct RawDestinations {
    #[serde(default)]
    pub allow: Vec<String>,
}

/// A compiled rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// Position in the list, from 1.
    pub number: usize,
    pub effect: Effect,
    tools: Vec<Glob>,
    kinds: Vec<Kind>,
    args: Vec<ArgGlob>,
    pub reason: Option<String>,
}

#[derive(Clone, Debug)]
struct ArgGlob {
    path: String,
    segments: Vec<String>,
    glob: Glob,
}

impl Rule {
    /// The tool glob that matches `name`, if any.
    pub fn tool_pattern(&self, name: &str) -> Option<&str> {
        if self.tools.is_empty() {
            return Some("*");
        }
        self.tools
            .iter()
            .find(|g| g.is_match(name))
            .map(Glob::as_str)
    }

    pub fn applies_to_kind(&self, kind: Kind) -> bool {
        self.kinds.is_empty() || self.kinds.contains(&kind)
    }

    pub fn has_args(&self) -> bool {
        !self.args.is_empty()
    }

    /// The argument values the rule matched, or `None` when the arguments do not match.
    pub fn match_args(&self, arguments: &Value) -> Option<BTreeMap<String, String>> {
        // Most rules do not match: decide without allocating, then record what matched.
        let every_item = self.effect == Effect::Allow;
        let mut found = Vec::with_capacity(self.args.len());
        for arg in &self.args {
            let value = arg
                .segments
                .iter()
                .try_fold(arguments, |v, key| v.get(key.as_str()))?;
            found.push((arg, matching_item(&arg.glob, value, every_item)?));
        }
        Some(
            found
                .into_iter()
                .map(|(arg, value)| (arg.path.clone(), text_of(value)))
                .collect(),
        )
    }
}

/// The value (or list item) that matches, when the argument matches: any item of a list for
/// `deny` and `ask`, every item for `allow`.
fn matching_item<'v>(glob: &Glob, value: &'v Value, every_item: bool) -> Option<&'v Value> {
    let scalar = |v: &Value| match v {
        Value::String(s) => glob.is_match(s),
        Value::Null => false,
        other => glob.is_match(&other.to_string()),
    };
    match value {
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) if every_item => items.iter().all(scalar).then(|| &items[0]),
        Value::Array(items) => items.iter().find(|v| scalar(v)),
        other => scalar(other).then_some(other),
    }
}

fn text_of(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Rules and the destination allow list, compiled.
#[derive(Clone, Debug, Default)]
pub struct Policy {
    raw: RawPolicy,
    rules: Vec<Rule>,
    allow: AllowList,
}

impl Policy {
    /// Compiles raw rules; `path` names their file in errors.
    pub fn compile(raw: RawPolicy, path: &Path) -> Result<Self> {
        let bad = |message: String, hint: &str| Error::Parse {
            path: path.to_owned(),
            location: None,
            message,
            hint: hint.to_owned(),
        };
        let mut rules = Vec::with_capacity(raw.rules.len());
        for (i, rule) in raw.rules.iter().enumerate() {
            let number = i + 1;
            let mut tools = Vec::with_capacity(rule.tools.len());
            for pattern in &rule.tools {
                let glob = Glob::new(pattern, false).map_err(|e| {
                    bad(
                        format!("rule {number}: the tool glob '{pattern}' does not compile: {e}"),
                        "write tool globs such as create_* or github/*",
                    )
                })?;
                tools.push(glob);
            }
            let mut args = Vec::with_capacity(rule.args.len());
            for (arg_path, pattern) in &rule.args {
                if arg_path.split('.').any(str::is_empty) {
                    return Err(bad(
                        format!("rule {number}: the argument path '{arg_path}' has an empty part"),
                        "name arguments as repo or metadata.namespace",
                    ));
                }
                let glob = Glob::new(pattern, false).map_err(|e| {
                    bad(format!("rule {number}: the glob '{pattern}' for argument '{arg_path}' does not compile: {e}"), "write argument globs such as myorg/* or production")
                })?;
                args.push(ArgGlob {
                    path: arg_path.clone(),
                    segments: arg_path.split('.').map(str::to_owned).collect(),
                    glob,
                });
            }
            rules.push(Rule {
                number,
                effect: rule.effect,
                tools,
                kinds: rule.kinds.clone(),
                args,
                reason: rule.reason.clone(),
            });
        }
        let mut patterns = Vec::with_capacity(raw.destinations.allow.len());
        for pattern in &raw.destinations.allow {
            patterns.push(
                DestinationPattern::parse(pattern)
                    .map_err(|e| bad(format!("destinations.allow: {e}"), &e.hint()))?,
            );
        }
        Ok(Self {
            raw,
            rules,
            allow: AllowList::new(patterns),
        })
    }

    /// Reads a rules file holding `rules:` and `destinations:`.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let raw: RawPolicy = if text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            RawPolicy::default()
        } else {
            yaml_serde::from_str(text).map_err(|e| {
                let location = e.location().map(|l| Location { line: l.line(), column: l.column() });
                let mut message = e.to_string();
                if let Some(at) = message.find(" at line ") {
                    message.truncate(at);
                }
                Error::Parse {
                    path: path.to_owned(),
                    location,
                    message,
                    hint: "a rules file holds rules: (each with effect: allow|ask|deny, tools:, kinds:, args:, reason:) and destinations: {allow: [...]}".into(),
                }
            })?
        };
        Self::compile(raw, path)
    }

    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    pub fn allow_list(&self) -> &AllowList {
        &self.allow
    }

    pub fn raw(&self) -> &RawPolicy {
        &self.raw
    }

    /// Hex SHA-256 of the effective rules, destinations and autonomy. Rule order does not
    /// change a decision, so it does not change the digest either.
    pub fn digest(&self, autonomy: Autonomy) -> String {
        // A struct, not a JSON map, so the field order (and with it the digest) never depends on
        // how serde_json orders map keys.
        #[derive(Serialize)]
        struct Canonical {
            autonomy: Autonomy,
            rules: Vec<String>,
            destinations: Vec<String>,
        }

        let mut rules: Vec<String> = self
            .raw
            .rules
            .iter()
            .map(|r| serde_json::to_string(r).unwrap_or_default())
            .collect();
        rules.sort();
        let mut allow = self.raw.destinations.allow.clone();
        allow.sort();
        let canonical = Canonical {
            autonomy,
            rules,
            destinations: allow,
        };
        let text = serde_json::to_string(&canonical).unwrap_or_default();
        hex(&Sha256::digest(text.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn policy(text: &str) -> Policy {
        Policy::parse(text, Path::new("rules.yaml")).unwrap()
    }

    #[test]
    fn the_design_example_loads() {
        let p = policy(
            "rules:\n  - effect: allow\n    tools: [\"create_branch\", \"github/*\"]\n    kinds: [write]\n    args: { repo: \"myorg/*\" }\n    reason: \"branches in our org are fine\"\n  - effect: deny\n    tools: [\"*\"]\n    args: { namespace: \"production\" }\ndestinations:\n  allow: [\"*@mycompany.com\", \"https://hooks.slack.com/services/T000/*\"]\n",
        );
        assert_eq!(p.rules().len(), 2);
        assert_eq!(
            p.rules()[0].tool_pattern("github/create_issue"),
            Some("github/*")
        );
        assert_eq!(p.rules()[0].tool_pattern("delete_repo"), None);
        assert_eq!(p.allow_list().patterns().len(), 2);
    }

    #[test]
    fn argument_lists_match_any_for_deny_and_all_for_allow() {
        let p = policy(
            "rules:\n  - effect: allow\n    args: { to: \"*@ours.com\" }\n  - effect: deny\n    args: { to: \"*@evil.com\" }\n",
        );
        let mixed = json!({"to": ["a@ours.com", "b@evil.com"]});
        assert_eq!(p.rules()[0].match_args(&mixed), None);
        assert!(p.rules()[1].match_args(&mixed).is_some());
        let ours = json!({"to": ["a@ours.com"]});
        assert_eq!(p.rules()[0].match_args(&ours).unwrap()["to"], "a@ours.com");
        assert_eq!(p.rules()[1].match_args(&json!({})), None);
    }

    #[test]
    fn nested_argument_paths_are_followed() {
        let p = policy("rules:\n  - effect: deny\n    args: { metadata.namespace: \"prod*\" }\n");
        assert!(
            p.rules()[0]
                .match_args(&json!({"metadata": {"namespace": "production"}}))
                .is_some()
        );
        assert!(
            p.rules()[0]
                .match_args(&json!({"metadata": {"namespace": "dev"}}))
                .is_none()
        );
    }

    #[test]
    fn errors_name_the_rule_and_the_place() {
        for (text, expected) in [
            (
                "rules:\n  - effect: maybe\n",
                "rules.yaml:2:13: rules[0].effect: unknown variant `maybe`",
            ),
            (
                "rules:\n  - effect: deny\n    tool: [x]\n",
                "rules.yaml:3:5: rules[0]: unknown field `tool`",
            ),
            (
                "rules:\n  - effect: deny\n    tools: [\"a[\"]\n",
                "rules.yaml: rule 1: the tool glob 'a[' does not compile",
            ),
            (
                "destinations:\n  allow: [\"https://\"]\n",
                "rules.yaml: destinations.allow: 'https://' is not a usable pattern",
            ),
        ] {
            let err = Policy::parse(text, Path::new("rules.yaml"))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(expected),
                "{err}\n  does not start with\n{expected}"
            );
        }
    }

    #[test]
    fn the_digest_ignores_rule_order_but_not_autonomy() {
        let a =
            policy("rules:\n  - effect: deny\n    tools: [a]\n  - effect: ask\n    tools: [b]\n");
        let b =
            policy("rules:\n  - effect: ask\n    tools: [b]\n  - effect: deny\n    tools: [a]\n");
        assert_eq!(
            a.digest(Autonomy::Supervised),
            b.digest(Autonomy::Supervised)
        );
        assert_ne!(a.digest(Autonomy::Supervised), a.digest(Autonomy::Full));
    }
}
