//! The record of one judgement: the effect and all the evidence behind it, so that explaining a
//! decision later is a read of data already here, never a second judgement.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Autonomy, Code, DecisionId, Effect, Kind, KindSource, Signal};

/// The cell of the autonomy × kind table that applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AutonomyCell {
    pub level: Autonomy,
    pub kind: Kind,
    pub effect: Effect,
}

/// A rule that matched the call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchedRule {
    /// The rule's position in its list, from 1.
    pub rule: usize,
    pub effect: Effect,
    /// The tool glob that matched the tool's name.
    pub tool_pattern: String,
    /// Argument path → the value its glob matched.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub args: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// What the destination check made of one destination in the call.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "verdict")]
pub enum DestinationVerdict {
    /// The tool is not `sends_out`: no destination belongs in its calls.
    NotSendsOut,
    /// Matched this pattern of the allow list.
    Allowed { pattern: String },
    /// An allow list is set and nothing on it matched.
    NotAllowed,
    /// No allow list is set.
    Unchecked,
}

/// A destination found in the call's arguments.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Destination {
    /// The argument's path, e.g. `to` or `message.recipients[1]`.
    pub argument: String,
    pub value: String,
    /// Why this argument is a destination: its name, or its schema `format`.
    pub because: String,
    #[serde(flatten)]
    pub verdict: DestinationVerdict,
}

/// An argument that does not fit the tool's schema, phrased for the model to fix.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArgumentError {
    /// JSON pointer into the arguments; empty for the arguments as a whole.
    pub path: String,
    pub message: String,
}

/// One judged call and why it came out as it did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Evaluation {
    pub decision_id: DecisionId,
    pub effect: Effect,
    /// Set when the effect is `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    pub tool: String,
    pub arguments: Value,
    /// `None` when no tool has that name.
    pub kind: Option<Kind>,
    pub kind_source: Option<KindSource>,
    pub kind_reason: Option<String>,
    /// What inference read, when inference decided the kind.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kind_signals: Vec<Signal>,
    pub autonomy: Autonomy,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autonomy_cell: Option<AutonomyCell>,
    /// Sentences a person or a model can read, strictest first.
    pub reasons: Vec<String>,
    pub matched_rules: Vec<MatchedRule>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub destinations: Vec<Destination>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub validation_errors: Vec<ArgumentError>,
    /// What the caller can do about a `deny`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
    /// Whether inference was on.
    pub inference: bool,
    /// SHA-256 of the `tool_kinds.yaml` in force, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kinds_digest: Option<String>,
    /// SHA-256 of the effective rules, destinations and autonomy.
    pub policy_digest: String,
}
