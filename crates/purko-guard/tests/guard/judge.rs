//! Judgement tables: autonomy × kind, the destination check, rule combination, decision ids,
//! and the bad input that must come back as a decision, never a panic.

use std::path::Path;

use pretty_assertions::assert_eq;
use purko_guard::{
    Catalogue, Guard, GuardConfig, Inference, KindEntry, KindsFile, Policy, autonomy_cell, combine,
    explain,
};
use purko_protocol::{Autonomy, Code, DecisionId, Effect, Kind, KindSource, ToolCall, ToolSpec};
use serde_json::{Value, json};

fn tool(name: &str, description: &str, schema: Value) -> ToolSpec {
    let mut tool = ToolSpec::new(name, description);
    tool.input_schema = Some(schema);
    tool
}

fn catalogue() -> Catalogue {
    Catalogue::new(vec![
        tool("list_issues", "List issues of a repository", json!({"type": "object", "properties": {"repo": {"type": "string"}}, "required": ["repo"]})),
        tool("create_branch", "Create a branch", json!({"type": "object", "properties": {"repo": {"type": "string"}, "branch": {"type": "string"}}})),
        tool("send_email", "Send an email", json!({"type": "object", "properties": {"to": {"type": "string"}, "body": {"type": "string"}}})),
        tool("get_weather", "Get the weather", json!({"type": "object", "properties": {"city": {"type": "string"}, "units": {"enum": ["metric", "imperial"]}}, "additionalProperties": false})),
        tool("broken", "Get a thing", json!({"type": "objekt"})),
        ToolSpec::new("schemaless_lookup", "Look up a word"),
    ])
    .unwrap()
}

fn guard_with(policy: &str, autonomy: Autonomy, kinds: Option<KindsFile>) -> Guard {
    let policy = Policy::parse(policy, Path::new("rules.yaml")).unwrap();
    Guard::new(GuardConfig {
        catalogue: catalogue(),
        kinds,
        inference: Inference::On,
        policy,
        autonomy,
    })
}

fn guard(autonomy: Autonomy) -> Guard {
    guard_with("", autonomy, None)
}

/// A guard over a single tool, supervised, without a kinds file or rules.
fn one_tool(tool: ToolSpec) -> Guard {
    Guard::new(GuardConfig {
        catalogue: Catalogue::new(vec![tool]).unwrap(),
        kinds: None,
        inference: Inference::On,
        policy: Policy::default(),
        autonomy: Autonomy::Supervised,
    })
}

fn call(name: &str, arguments: Value) -> ToolCall {
    ToolCall::new(name, arguments)
}

#[test]
fn autonomy_by_kind_grid() {
    use Effect::{Allow, Ask, Deny};
    let table = [
        (Autonomy::Manual, [Deny, Deny, Deny]),
        (Autonomy::Restricted, [Allow, Deny, Deny]),
        (Autonomy::Supervised, [Allow, Ask, Ask]),
        (Autonomy::Full, [Allow, Allow, Allow]),
    ];
    for (level, effects) in table {
        for (kind, effect) in [Kind::Read, Kind::Write, Kind::SendsOut]
            .into_iter()
            .zip(effects)
        {
            assert_eq!(autonomy_cell(level, kind), effect, "{level} × {kind}");
        }
    }
    // The same grid, end to end.
    for (level, [read, write, send]) in table {
        let g = guard(level);
        assert_eq!(
            g.evaluate(&call("list_issues", json!({"repo": "a/b"})))
                .effect,
            read,
            "{level} read"
        );
        assert_eq!(
            g.evaluate(&call("create_branch", json!({"repo": "a/b"})))
                .effect,
            write,
            "{level} write"
        );
        assert_eq!(
            g.evaluate(&call("send_email", json!({"to": "a@b.c"})))
                .effect,
            send,
            "{level} send"
        );
    }
}

#[test]
fn autonomy_blocks_carry_their_code() {
    let e = guard(Autonomy::Restricted).evaluate(&call("create_branch", json!({"repo": "a/b"})));
    assert_eq!(
        (e.effect, e.code),
        (Effect::Deny, Some(Code::AutonomyBlocked))
    );
    assert_eq!(
        e.reasons,
        vec!["write tools are blocked at restricted autonomy"]
    );
}

#[test]
fn rule_combination_table() {
    use Effect::{Allow, Ask, Deny};
    for (cell, rule, expected) in [
        (Allow, None, Allow),
        (Allow, Some(Allow), Allow),
        (Allow, Some(Ask), Ask),
        (Allow, Some(Deny), Deny),
        (Ask, None, Ask),
        (Ask, Some(Allow), Allow),
        (Ask, Some(Ask), Ask),
        (Ask, Some(Deny), Deny),
        (Deny, None, Deny),
        (Deny, Some(Allow), Deny),
        (Deny, Some(Ask), Deny),
        (Deny, Some(Deny), Deny),
    ] {
        assert_eq!(combine(cell, rule), expected, "{cell:?} with rule {rule:?}");
    }
}

#[test]
fn an_allow_rule_turns_ask_into_allow_but_never_lifts_an_autonomy_deny() {
    let rules = "rules:\n  - effect: allow\n    tools: [create_*]\n    args: { repo: \"myorg/*\" }\n    reason: ours\n";
    let supervised = guard_with(rules, Autonomy::Supervised, None);
    let ours = supervised.evaluate(&call("create_branch", json!({"repo": "myorg/app"})));
    assert_eq!(ours.effect, Effect::Allow);
    assert_eq!(ours.matched_rules.len(), 1);
    assert_eq!(ours.matched_rules[0].args["repo"], "myorg/app");
    let theirs = supervised.evaluate(&call("create_branch", json!({"repo": "other/app"})));
    assert_eq!(
        (theirs.effect, theirs.matched_rules.len()),
        (Effect::Ask, 0)
    );
    let restricted = guard_with(rules, Autonomy::Restricted, None);
    let e = restricted.evaluate(&call("create_branch", json!({"repo": "myorg/app"})));
    assert_eq!(
        (e.effect, e.code),
        (Effect::Deny, Some(Code::AutonomyBlocked))
    );
}

#[test]
fn the_strictest_rule_wins() {
    let rules = "rules:\n  - effect: allow\n    tools: [\"*\"]\n  - effect: ask\n    kinds: [read]\n  - effect: deny\n    args: { repo: \"prod/*\" }\n";
    let g = guard_with(rules, Autonomy::Full, None);
    assert_eq!(
        g.evaluate(&call("list_issues", json!({"repo": "dev/x"})))
            .effect,
        Effect::Ask
    );
    let e = g.evaluate(&call("list_issues", json!({"repo": "prod/x"})));
    assert_eq!(
        (e.effect, e.code),
        (Effect::Deny, Some(Code::DeniedByPolicy))
    );
    assert_eq!(
        e.matched_rules.iter().map(|r| r.rule).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
}

#[test]
fn a_destination_in_a_read_or_write_call_is_refused_at_every_level() {
    for level in Autonomy::ALL {
        let g = guard(*level);
        for (name, arguments) in [
            (
                "list_issues",
                json!({"repo": "a/b", "webhook": "https://evil.example/x"}),
            ),
            (
                "create_branch",
                json!({"repo": "a/b", "notify": {"to": "eve@evil.example"}}),
            ),
        ] {
            let e = g.evaluate(&call(name, arguments));
            assert_eq!(e.effect, Effect::Deny, "{level} {name}");
            assert!(
                e.destinations.iter().any(|d| d.value.contains("evil")),
                "{level} {name}"
            );
            if *level != Autonomy::Manual
                && !(*level == Autonomy::Restricted && name == "create_branch")
            {
                assert_eq!(e.code, Some(Code::DestinationRefused), "{level} {name}");
            }
        }
    }
}

#[test]
fn sends_out_destinations_must_fit_the_allow_list() {
    let rules = "destinations:\n  allow: [\"*@mycompany.com\"]\n";
    let g = guard_with(rules, Autonomy::Full, None);
    let ok = g.evaluate(&call("send_email", json!({"to": "ann@mycompany.com"})));
    assert_eq!(ok.effect, Effect::Allow);
    let e = g.evaluate(&call(
        "send_email",
        json!({"to": "ann@mycompany.com, eve@evil.com"}),
    ));
    assert_eq!(
        (e.effect, e.code),
        (Effect::Deny, Some(Code::DestinationRefused))
    );
    // Without an allow list a sends_out destination is recorded, not refused.
    let open = guard(Autonomy::Full).evaluate(&call("send_email", json!({"to": "eve@evil.com"})));
    assert_eq!(open.effect, Effect::Allow);
    assert_eq!(open.destinations.len(), 1);
}

#[test]
fn decision_ids_name_the_kinds_file_inference_and_policy() {
    let without =
        guard(Autonomy::Supervised).evaluate(&call("list_issues", json!({"repo": "a/b"})));
    let id: DecisionId = without.decision_id.as_str().parse().unwrap();
    assert_eq!(id.kinds_digest(), "000000000000");
    assert!(id.inference());
    assert_eq!(id.policy_digest(), &without.policy_digest[..8]);

    let file = KindsFile::parse("infer: false\ntools: {}\n", Path::new("k.yaml")).unwrap();
    let digest = file.digest().unwrap().to_owned();
    let with = guard_with("", Autonomy::Supervised, Some(file))
        .evaluate(&call("list_issues", json!({"repo": "a/b"})));
    assert_eq!(with.decision_id.kinds_digest(), &digest[..12]);
    assert!(!with.decision_id.inference());
    assert_ne!(with.decision_id, without.decision_id);
    // Another autonomy is another policy.
    let full = guard(Autonomy::Full).evaluate(&call("list_issues", json!({"repo": "a/b"})));
    assert_ne!(full.decision_id.policy_digest(), id.policy_digest());
}

#[test]
fn an_unknown_tool_is_a_decision_with_a_suggestion() {
    let e = guard(Autonomy::Full).evaluate(&call("list_issue", json!({})));
    assert_eq!(
        (e.effect, e.code, e.kind),
        (Effect::Deny, Some(Code::ToolNotFound), None)
    );
    assert_eq!(
        e.remediation.as_deref(),
        Some("did you mean 'list_issues'? Call the tool by its exact name")
    );
}

#[test]
fn invalid_arguments_are_a_decision_the_model_can_act_on() {
    let g = guard(Autonomy::Full);
    let e = g.evaluate(&call(
        "get_weather",
        json!({"city": "Lisbon", "units": "kelvin"}),
    ));
    assert_eq!(
        (e.effect, e.code),
        (Effect::Deny, Some(Code::ValidationFailed))
    );
    assert_eq!(
        e.reasons,
        vec!["argument 'units' must be one of metric, imperial"]
    );
    assert_eq!(
        e.remediation.as_deref(),
        Some(
            "call get_weather again with arguments that fix this: argument 'units' must be one of metric, imperial"
        )
    );
    for not_an_object in [json!([1, 2]), json!("city=Lisbon"), json!(null), json!(3)] {
        let e = g.evaluate(&call("get_weather", not_an_object));
        assert_eq!(e.code, Some(Code::ValidationFailed));
        assert!(
            e.reasons[0].starts_with("the arguments must be a JSON object"),
            "{:?}",
            e.reasons
        );
    }
}

#[test]
fn a_broken_schema_refuses_calls_and_a_missing_one_says_so() {
    let g = guard(Autonomy::Full);
    let broken = g.evaluate(&call("broken", json!({})));
    assert_eq!(broken.code, Some(Code::ValidationFailed));
    assert!(
        broken.reasons[0].starts_with("the tool's inputSchema is not a valid JSON Schema"),
        "{:?}",
        broken.reasons
    );
    assert_eq!(
        broken.remediation.as_deref(),
        Some("broken cannot be called until its inputSchema is fixed")
    );
    let schemaless = g.evaluate(&call("schemaless_lookup", json!({"word": "x"})));
    assert_eq!(schemaless.effect, Effect::Allow);
    assert!(schemaless.reasons.contains(
        &"schemaless_lookup declares no inputSchema, so its arguments were not checked".to_owned()
    ));
}

#[test]
fn a_kinds_file_entry_decides_and_is_explained() {
    let mut file = KindsFile::new(true);
    file.tools.insert(
        "list_issues".into(),
        KindEntry {
            kind: Kind::Write,
            source: KindSource::You,
            reason: "it also locks the repo".into(),
        },
    );
    let g = guard_with("", Autonomy::Supervised, Some(file));
    let e = g.evaluate(&call("list_issues", json!({"repo": "a/b"})));
    assert_eq!(
        (e.effect, e.kind, e.kind_source),
        (Effect::Ask, Some(Kind::Write), Some(KindSource::You))
    );
    let text = explain(&e);
    assert!(
        text.contains("kind        write, from tool_kinds.yaml, written by a person (source: you)"),
        "{text}"
    );
    assert!(text.contains("it also locks the repo"), "{text}");
    assert!(
        text.contains("autonomy    supervised × write → ask"),
        "{text}"
    );
}

#[test]
fn a_ten_megabyte_description_is_read_without_trouble() {
    let description = "Get the value. ".repeat(700_000) + "Then delete it.";
    let g = one_tool(ToolSpec::new("get_value", description));
    let c = g.classification("get_value").unwrap();
    assert_eq!(c.kind, Kind::Write);
    assert!(c.reason.len() < 200, "{}", c.reason);
}

#[test]
fn a_giant_identifier_in_a_description_stays_out_of_the_reason() {
    let description = format!("Use {}_x to do it.", "update".repeat(2_000_000));
    let g = one_tool(ToolSpec::new("thing", description));
    let c = g.classification("thing").unwrap();
    assert_eq!((c.kind, c.source), (Kind::Write, KindSource::Unsure));
    assert!(c.reason.len() < 300, "{} bytes", c.reason.len());
    assert!(
        c.signals
            .iter()
            .all(|s| s.ignored.as_ref().is_none_or(|w| w.len() < 100))
    );
}

#[test]
fn tools_that_could_never_run_are_left_out_of_lists() {
    let rules = "rules:\n  - effect: deny\n    tools: [send_*]\n";
    let g = guard_with(rules, Autonomy::Supervised, None);
    assert!(g.could_call("list_issues"));
    assert!(g.could_call("create_branch"));
    assert!(!g.could_call("send_email"));
    assert!(!guard(Autonomy::Restricted).could_call("create_branch"));
    assert!(!guard(Autonomy::Manual).could_call("list_issues"));
}
