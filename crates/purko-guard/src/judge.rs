//! Judgement of one call (DESIGN.md sections 2 and 4): resolve, validate, classify, then
//! autonomy × kind, the destination check and the rules, strictest first.
//!
//! Everything that does not depend on the call is done once, when the guard is built: each
//! tool's kind, its destinations, the rules whose tool globs and kinds fit it, and (on first
//! use) its compiled schema. Judging a call is then a lookup, a validation and a few glob
//! matches. A refusal is an `Evaluation` like any other, never an error.

use std::sync::OnceLock;

use purko_protocol::{
    ArgumentError, Autonomy, AutonomyCell, Classification, Code, DecisionId, Destination,
    DestinationVerdict, Effect, Evaluation, Kind, KindSource, MatchedRule, ToolCall, ToolSpec,
};
use serde_json::Value;

use crate::catalogue::Catalogue;
use crate::classify::{Inference, classify};
use crate::destination::DestinationMap;
use crate::draft::Draft;
use crate::kinds_file::KindsFile;
use crate::policy::Policy;
use crate::validate::Schema;

/// The autonomy × kind table.
pub fn autonomy_cell(level: Autonomy, kind: Kind) -> Effect {
    match (level, kind) {
        (Autonomy::Manual, _) | (Autonomy::Restricted, Kind::Write | Kind::SendsOut) => {
            Effect::Deny
        }
        (Autonomy::Restricted | Autonomy::Supervised | Autonomy::Full, Kind::Read)
        | (Autonomy::Full, _) => Effect::Allow,
        (Autonomy::Supervised, Kind::Write | Kind::SendsOut) => Effect::Ask,
    }
}

/// Combines the autonomy cell with the strictest matching rule: the strictest wins, except that
/// an allow rule turns an autonomy `ask` into `allow`. Nothing lifts an autonomy `deny`.
pub fn combine(cell: Effect, rules: Option<Effect>) -> Effect {
    match (cell, rules) {
        (Effect::Ask, Some(Effect::Allow)) => Effect::Allow,
        (cell, Some(rule)) => cell.max(rule),
        (cell, None) => cell,
    }
}

struct Entry {
    classification: Classification,
    destinations: DestinationMap,
    /// Rules whose tool globs and kinds fit this tool.
    rules: Vec<usize>,
    schema: OnceLock<Schema>,
}

/// What a guard is built from.
#[derive(Debug)]
pub struct GuardConfig {
    pub catalogue: Catalogue,
    pub kinds: Option<KindsFile>,
    pub inference: Inference,
    pub policy: Policy,
    pub autonomy: Autonomy,
}

/// Judges calls against one catalogue, kinds file, policy and autonomy level.
pub struct Guard {
    catalogue: Catalogue,
    kinds: Option<KindsFile>,
    inference: Inference,
    policy: Policy,
    autonomy: Autonomy,
    entries: Vec<Entry>,
    policy_digest: String,
}

impl std::fmt::Debug for Guard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guard")
            .field("tools", &self.catalogue.len())
            .field("rules", &self.policy.rules().len())
            .field("autonomy", &self.autonomy)
            .field("inference", &self.inference)
            .finish_non_exhaustive()
    }
}

impl Guard {
    pub fn new(config: GuardConfig) -> Self {
        let GuardConfig {
            catalogue,
            kinds,
            inference,
            policy,
            autonomy,
        } = config;
        let inference = Inference::effective(kinds.as_ref(), inference);
        let entries = catalogue
            .tools()
            .iter()
            .map(|tool| {
                let destinations = DestinationMap::from_schema(tool.input_schema.as_ref());
                let classification = classify(tool, kinds.as_ref(), inference, &destinations);
                let rules = policy
                    .rules()
                    .iter()
                    .enumerate()
                    .filter(|(_, r)| {
                        r.tool_pattern(&tool.name).is_some()
                            && r.applies_to_kind(classification.kind)
                    })
                    .map(|(i, _)| i)
                    .collect();
                Entry {
                    classification,
                    destinations,
                    rules,
                    schema: OnceLock::new(),
                }
            })
            .collect();
        let policy_digest = policy.digest(autonomy);
        Self {
            catalogue,
            kinds,
            inference,
            policy,
            autonomy,
            entries,
            policy_digest,
        }
    }

    pub fn catalogue(&self) -> &Catalogue {
        &self.catalogue
    }

    pub fn inference(&self) -> Inference {
        self.inference
    }

    pub fn autonomy(&self) -> Autonomy {
        self.autonomy
    }

    /// SHA-256 of the `tool_kinds.yaml` in force, when there is one.
    pub fn kinds_digest(&self) -> Option<&str> {
        self.kinds.as_ref().and_then(KindsFile::digest)
    }

    /// SHA-256 of the effective rules, destinations and autonomy.
    pub fn policy_digest(&self) -> &str {
        &self.policy_digest
    }

    /// How a tool is classified, if the catalogue has it.
    pub fn classification(&self, name: &str) -> Option<&Classification> {
        self.catalogue
            .position(name)
            .map(|i| &self.entries[i].classification)
    }

    /// A `tool_kinds.yaml` for every tool: the file's own entries as they are, every other tool
    /// as classified, uncertain ones first.
    pub fn draft(&self) -> KindsFile {
        let mut draft = Draft::new(self.kinds.clone(), self.inference);
        for (tool, entry) in self.catalogue.tools().iter().zip(&self.entries) {
            draft.add_classified(&tool.name, &entry.classification);
        }
        draft.finish()
    }

    /// Whether some call of the tool could run: the tool lists an agent sees leave out the ones
    /// it could never call.
    pub fn could_call(&self, name: &str) -> bool {
        let Some(i) = self.catalogue.position(name) else {
            return false;
        };
        let entry = &self.entries[i];
        autonomy_cell(self.autonomy, entry.classification.kind) != Effect::Deny
            && !entry.rules.iter().any(|&r| {
                let rule = &self.policy.rules()[r];
                rule.effect == Effect::Deny && !rule.has_args()
            })
    }

    fn mint(&self) -> DecisionId {
        let kinds = self.kinds.as_ref().and_then(KindsFile::digest);
        DecisionId::new(
            kinds,
            self.inference.is_on(),
            &self.policy_digest,
            &ulid::Ulid::generate().to_string(),
        )
    }

    /// Judges one call.
    pub fn evaluate(&self, call: &ToolCall) -> Evaluation {
        let mut evaluation = Evaluation {
            decision_id: self.mint(),
            effect: Effect::Deny,
            code: None,
            tool: call.name.clone(),
            arguments: call.arguments.clone(),
            kind: None,
            kind_source: None,
            kind_reason: None,
            kind_signals: Vec::new(),
            autonomy: self.autonomy,
            autonomy_cell: None,
            reasons: Vec::new(),
            matched_rules: Vec::new(),
            destinations: Vec::new(),
            validation_errors: Vec::new(),
            remediation: None,
            inference: self.inference.is_on(),
            kinds_digest: self
                .kinds
                .as_ref()
                .and_then(KindsFile::digest)
                .map(str::to_owned),
            policy_digest: self.policy_digest.clone(),
        };
        let Some(i) = self.catalogue.position(&call.name) else {
            let similar = self.catalogue.similar(&call.name);
            evaluation.code = Some(Code::ToolNotFound);
            evaluation
                .reasons
                .push(format!("no tool is named '{}'", call.name));
            evaluation.remediation = Some(if similar.is_empty() {
                "call one of the tools in the tool list, by its exact name".to_owned()
            } else {
                format!(
                    "did you mean {}? Call the tool by its exact name",
                    quote_list(&similar)
                )
            });
            return evaluation;
        };
        let tool = &self.catalogue.tools()[i];
        let entry = &self.entries[i];
        let c = &entry.classification;
        evaluation.kind = Some(c.kind);
        evaluation.kind_source = Some(c.source);
        evaluation.kind_reason = Some(c.reason.clone());
        evaluation.kind_signals.clone_from(&c.signals);

        if let Some(errors) = Self::validate(tool, entry, &call.arguments, &mut evaluation.reasons)
        {
            evaluation.code = Some(Code::ValidationFailed);
            evaluation.remediation = Some(match errors.first() {
                Some(first) if !first.path.starts_with('#') => {
                    format!(
                        "call {} again with arguments that fix this: {}",
                        tool.name, first.message
                    )
                }
                _ => format!(
                    "{} cannot be called until its inputSchema is fixed",
                    tool.name
                ),
            });
            evaluation
                .reasons
                .extend(errors.iter().map(|e| e.message.clone()));
            evaluation.validation_errors = errors;
            return evaluation;
        }

        let cell = autonomy_cell(self.autonomy, c.kind);
        evaluation.autonomy_cell = Some(AutonomyCell {
            level: self.autonomy,
            kind: c.kind,
            effect: cell,
        });
        let destination_refused =
            self.check_destinations(c.kind, entry, &call.arguments, &mut evaluation.destinations);
        let mut strictest_rule: Option<Effect> = None;
        for &r in &entry.rules {
            let rule = &self.policy.rules()[r];
            if let Some(args) = rule.match_args(&call.arguments) {
                strictest_rule = strictest_rule.max(Some(rule.effect));
                evaluation.matched_rules.push(MatchedRule {
                    rule: rule.number,
                    effect: rule.effect,
                    tool_pattern: rule.tool_pattern(&tool.name).unwrap_or("*").to_owned(),
                    args,
                    reason: rule.reason.clone(),
                });
            }
        }
        let mut effect = combine(cell, strictest_rule);
        if destination_refused {
            effect = Effect::Deny;
        }
        evaluation.effect = effect;
        self.explain_effect(&mut evaluation, cell, strictest_rule, destination_refused);
        evaluation
    }

    /// `Some(errors)` when the call cannot go on: arguments that are no object, do not fit the
    /// schema, or a schema that is not one.
    fn validate(
        tool: &ToolSpec,
        entry: &Entry,
        arguments: &Value,
        reasons: &mut Vec<String>,
    ) -> Option<Vec<ArgumentError>> {
        if !arguments.is_object() {
            let got = match arguments {
                Value::Null => "null",
                Value::Array(_) => "an array",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                Value::Object(_) => "an object",
            };
            return Some(vec![ArgumentError {
                path: String::new(),
                message: format!(
                    "the arguments must be a JSON object of named arguments, not {got}"
                ),
            }]);
        }
        match entry
            .schema
            .get_or_init(|| Schema::compile(tool.input_schema.as_ref()))
        {
            Schema::Invalid(why) => Some(vec![ArgumentError {
                path: "#inputSchema".into(),
                message: format!(
                    "the tool's inputSchema is not a valid JSON Schema, so no call of it can be checked: {why}"
                ),
            }]),
            Schema::Missing => {
                reasons.push(format!(
                    "{} declares no inputSchema, so its arguments were not checked",
                    tool.name
                ));
                None
            }
            schema @ Schema::Compiled(_) => {
                let errors = schema.check(arguments);
                (!errors.is_empty()).then_some(errors)
            }
        }
    }

    /// Records every destination in the call; whether one of them refuses it.
    fn check_destinations(
        &self,
        kind: Kind,
        entry: &Entry,
        arguments: &Value,
        out: &mut Vec<Destination>,
    ) -> bool {
        let allow = self.policy.allow_list();
        let mut refused = false;
        for found in entry.destinations.find_in_call(arguments) {
            let verdict = if kind != Kind::SendsOut {
                refused = true;
                DestinationVerdict::NotSendsOut
            } else if allow.is_empty() {
                DestinationVerdict::Unchecked
            } else if let Some(pattern) = allow.allows(&found.value) {
                DestinationVerdict::Allowed {
                    pattern: pattern.as_str().to_owned(),
                }
            } else {
                refused = true;
                DestinationVerdict::NotAllowed
            };
            out.push(Destination {
                argument: found.argument,
                value: found.value,
                because: found.because.describe(),
                verdict,
            });
        }
        refused
    }

    fn explain_effect(
        &self,
        e: &mut Evaluation,
        cell: Effect,
        rule: Option<Effect>,
        destination_refused: bool,
    ) {
        let kind = e.kind.unwrap_or(Kind::Write);
        let level = self.autonomy;
        if cell == Effect::Deny {
            e.code = Some(Code::AutonomyBlocked);
            e.reasons.push(if level == Autonomy::Manual {
                "the agent is at manual autonomy: no tool runs".to_owned()
            } else {
                format!("{kind} tools are blocked at {level} autonomy")
            });
            e.remediation = Some(format!(
                "this call needs more autonomy than {level}; answer without {}, or ask the operator",
                e.tool
            ));
        }
        if destination_refused {
            e.code.get_or_insert(Code::DestinationRefused);
            for d in &e.destinations {
                match d.verdict {
                    DestinationVerdict::NotSendsOut => e.reasons.push(format!(
                        "argument '{}' is a destination ({}), and {} is a {kind} tool: it must not send anywhere",
                        d.argument, d.because, e.tool
                    )),
                    DestinationVerdict::NotAllowed => e.reasons.push(format!(
                        "destination '{}' (argument '{}') is not on the destinations allow list",
                        d.value, d.argument
                    )),
                    _ => {}
                }
            }
            e.remediation.get_or_insert_with(|| {
                if kind == Kind::SendsOut {
                    format!("call {} again with a destination on the allow list", e.tool)
                } else {
                    let args: Vec<&str> =
                        e.destinations.iter().map(|d| d.argument.as_str()).collect();
                    format!("call {} again without {}", e.tool, quote_list(&args))
                }
            });
        }
        match rule {
            Some(Effect::Deny) => {
                e.code.get_or_insert(Code::DeniedByPolicy);
                e.reasons.extend(
                    e.matched_rules
                        .iter()
                        .filter(|r| r.effect == Effect::Deny)
                        .map(|r| rule_reason(r, "denies")),
                );
                e.remediation.get_or_insert_with(|| {
                    format!("a rule forbids this call of {}; do not retry it", e.tool)
                });
            }
            Some(Effect::Ask) => {
                e.reasons.extend(
                    e.matched_rules
                        .iter()
                        .filter(|r| r.effect == Effect::Ask)
                        .map(|r| rule_reason(r, "asks a person")),
                );
            }
            Some(Effect::Allow) if cell == Effect::Ask && e.effect == Effect::Allow => {
                e.reasons.extend(
                    e.matched_rules
                        .iter()
                        .filter(|r| r.effect == Effect::Allow)
                        .map(|r| rule_reason(r, "allows it without asking")),
                );
            }
            _ => {}
        }
        if e.effect == Effect::Ask && cell == Effect::Ask && rule != Some(Effect::Ask) {
            e.reasons
                .push(format!("{kind} needs a person's yes at {level}"));
        }
        if e.effect == Effect::Allow
            && e.reasons
                .iter()
                .all(|r| r.contains("declares no inputSchema"))
        {
            e.reasons.push(format!("{kind} runs at {level}"));
        }
        if e.kind_source == Some(KindSource::Unsure) && e.effect != Effect::Allow {
            e.reasons.push(format!(
                "nothing told what {} does, so it is treated as a write",
                e.tool
            ));
        }
    }
}

fn rule_reason(rule: &MatchedRule, does: &str) -> String {
    match &rule.reason {
        Some(reason) => format!("rule {} {does}: {reason}", rule.rule),
        None => format!("rule {} ({}) {does}", rule.rule, rule.tool_pattern),
    }
}

fn quote_list(items: &[&str]) -> String {
    items
        .iter()
        .map(|i| format!("'{i}'"))
        .collect::<Vec<_>>()
        .join(", ")
}
