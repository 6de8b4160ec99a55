//! Tool kinds, where a kind came from, effects and autonomy levels (DESIGN.md sections 3 and 4).
//!
//! `Kind` and `Effect` are ordered from the most lenient to the strictest, so "the strictest
//! wins" is `max()`.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// What a tool does to the world.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Reads, changes nothing, sends nothing to anyone.
    Read,
    /// Changes something, delivers nothing to an outside recipient.
    Write,
    /// Delivers data to an address, a URL, a person or a channel.
    SendsOut,
}

/// Who or what decided a tool's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KindSource {
    /// A person, in `tool_kinds.yaml`.
    You,
    /// An AI assistant, through `set_tool_kinds`.
    Assistant,
    /// The tool's own trusted catalogue marks.
    Catalogue,
    /// Inference, where an MCP annotation was the deciding signal.
    Annotation,
    /// Inference from the tool's name, description, arguments and HTTP method.
    Inferred,
    /// Nothing could tell: a write, so that it costs a confirmation and never a silent run.
    Unsure,
}

/// What happens to a call. Ordered: `Allow < Ask < Deny`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Effect {
    Allow,
    Ask,
    Deny,
}

/// How much an agent may do without a person (seed 000).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
#[serde(rename_all = "snake_case")]
pub enum Autonomy {
    /// No tools at all.
    Manual,
    /// Reads only (Shu).
    Restricted,
    /// Reads run; writes and sends wait for a person unless a rule allows them (Ha).
    Supervised,
    /// Everything runs (Ri).
    Full,
}

/// A word that is not one of a type's wire words.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{given}' is not a known {what}; use one of: {}", expected.join(", "))]
pub struct ParseWordError {
    pub what: &'static str,
    pub given: String,
    pub expected: &'static [&'static str],
}

macro_rules! wire_words {
    ($ty:ident, $what:literal, { $($variant:ident => $word:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
            const WORDS: &'static [&'static str] = &[$($word),+];

            /// The wire word, as in configuration files and JSON.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $word),+
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl FromStr for $ty {
            type Err = ParseWordError;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($word => Ok($ty::$variant),)+
                    _ => Err(ParseWordError { what: $what, given: s.to_owned(), expected: Self::WORDS }),
                }
            }
        }
    };
}

wire_words!(Kind, "tool kind", { Read => "read", Write => "write", SendsOut => "sends_out" });
wire_words!(KindSource, "kind source", {
    You => "you",
    Assistant => "assistant",
    Catalogue => "catalogue",
    Annotation => "annotation",
    Inferred => "inferred",
    Unsure => "unsure",
});
wire_words!(Effect, "effect", { Allow => "allow", Ask => "ask", Deny => "deny" });
wire_words!(Autonomy, "autonomy level", {
    Manual => "manual",
    Restricted => "restricted",
    Supervised => "supervised",
    Full => "full",
});

/// Where in a tool's definition a signal was read.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "in", content = "at")]
pub enum SignalPlace {
    /// The tool's name.
    Name,
    /// The tool's description.
    Description,
    /// An argument, by its name; the dotted path into the input schema.
    ArgumentName(String),
    /// An argument, by its JSON Schema `format`; the dotted path into the input schema.
    ArgumentFormat(String),
    /// The HTTP method of an API operation.
    HttpMethod,
    /// An MCP annotation (`readOnlyHint`, `destructiveHint`).
    Annotation,
}

/// One piece of evidence that inference read from a tool's definition.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Signal {
    /// The kind this signal points to.
    pub points_to: Kind,
    /// Where it was read.
    #[serde(flatten)]
    pub place: SignalPlace,
    /// The word, argument or value that was read, as written.
    pub text: String,
    /// Why the signal does not count, when it does not: "under negation 'without'",
    /// "names another tool `update_issue`".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ignored: Option<String>,
}

impl Signal {
    /// Whether this signal takes part in the decision.
    pub fn counts(&self) -> bool {
        self.ignored.is_none()
    }
}

/// A tool's kind, who decided it, and the evidence.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Classification {
    pub kind: Kind,
    pub source: KindSource,
    /// One line a person can check.
    pub reason: String,
    /// What inference read, when inference decided; empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub signals: Vec<Signal>,
    /// Whether counted signals pointed both to read and to something else.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conflicted: bool,
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    #[test]
    fn strictest_effect_is_the_maximum() {
        assert_eq!(
            [Effect::Allow, Effect::Deny, Effect::Ask].into_iter().max(),
            Some(Effect::Deny)
        );
        assert!(Effect::Allow < Effect::Ask);
    }

    #[test]
    fn words_round_trip_through_parse_and_display() {
        for kind in Kind::ALL {
            assert_eq!(kind.as_str().parse::<Kind>(), Ok(*kind));
        }
        for level in Autonomy::ALL {
            assert_eq!(level.to_string().parse::<Autonomy>(), Ok(*level));
        }
        for source in KindSource::ALL {
            let json = serde_json::to_value(source).unwrap();
            assert_eq!(json, source.as_str());
        }
    }

    #[test]
    fn an_unknown_word_names_the_choices() {
        let err = "sometimes".parse::<Autonomy>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "'sometimes' is not a known autonomy level; use one of: manual, restricted, supervised, full"
        );
    }
}
