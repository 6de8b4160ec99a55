//! Properties of judgement: adding a deny rule never loosens a decision, rule order never
//! changes one, and a kinds-file entry always decides the kind.

use std::path::Path;

use proptest::prelude::*;
use purko_guard::{
    Catalogue, Guard, GuardConfig, Inference, KindEntry, KindsFile, Policy, RawPolicy, RawRule,
};
use purko_protocol::{Autonomy, Effect, Kind, KindSource, ToolCall, ToolSpec};
use serde_json::json;

const TOOLS: &[(&str, &str)] = &[
    ("list_issues", "List issues"),
    ("create_branch", "Create a branch"),
    ("send_email", "Send an email"),
    ("orders", "Orders endpoint"),
    ("github/merge_pr", "Merge a pull request"),
];

fn catalogue() -> Catalogue {
    let tools = TOOLS
        .iter()
        .map(|(n, d)| {
            let mut t = ToolSpec::new(*n, *d);
            t.input_schema = Some(json!({"type": "object"}));
            t
        })
        .collect();
    Catalogue::new(tools).unwrap()
}

fn effect() -> impl Strategy<Value = Effect> {
    prop_oneof![Just(Effect::Allow), Just(Effect::Ask), Just(Effect::Deny)]
}

fn kind() -> impl Strategy<Value = Kind> {
    prop_oneof![Just(Kind::Read), Just(Kind::Write), Just(Kind::SendsOut)]
}

fn autonomy() -> impl Strategy<Value = Autonomy> {
    prop_oneof![
        Just(Autonomy::Manual),
        Just(Autonomy::Restricted),
        Just(Autonomy::Supervised),
        Just(Autonomy::Full)
    ]
}

fn rule() -> impl Strategy<Value = RawRule> {
    let tools = prop::collection::vec(
        prop_oneof![
            Just("*"),
            Just("list_*"),
            Just("create_branch"),
            Just("send_*"),
            Just("github/*"),
            Just("orders")
        ],
        0..3,
    );
    let kinds = prop::collection::vec(kind(), 0..2);
    let args = prop::option::of(prop_oneof![Just("myorg/*"), Just("prod"), Just("*")]);
    (effect(), tools, kinds, args).prop_map(|(effect, tools, kinds, arg)| RawRule {
        effect,
        tools: tools.into_iter().map(str::to_owned).collect(),
        kinds,
        args: arg
            .map(|a| [("repo".to_owned(), a.to_owned())].into())
            .unwrap_or_default(),
        reason: None,
    })
}

fn call() -> impl Strategy<Value = ToolCall> {
    let name = prop::sample::select(TOOLS.iter().map(|(n, _)| *n).collect::<Vec<_>>());
    let repo = prop_oneof![Just("myorg/app"), Just("prod"), Just("other/x")];
    (name, prop::option::of(repo)).prop_map(|(name, repo)| {
        ToolCall::new(name, repo.map_or_else(|| json!({}), |r| json!({"repo": r})))
    })
}

fn judge(rules: Vec<RawRule>, level: Autonomy, kinds: Option<KindsFile>, c: &ToolCall) -> Effect {
    let policy = Policy::compile(
        RawPolicy {
            rules,
            ..RawPolicy::default()
        },
        Path::new("rules.yaml"),
    )
    .unwrap();
    let guard = Guard::new(GuardConfig {
        catalogue: catalogue(),
        kinds,
        inference: Inference::On,
        policy,
        autonomy: level,
    });
    guard.evaluate(c).effect
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn adding_a_deny_rule_never_loosens(rules in prop::collection::vec(rule(), 0..6), extra in rule(), level in autonomy(), c in call()) {
        let before = judge(rules.clone(), level, None, &c);
        let mut more = rules;
        more.push(RawRule { effect: Effect::Deny, ..extra });
        let after = judge(more, level, None, &c);
        prop_assert!(after >= before, "{before:?} became {after:?}");
    }

    #[test]
    fn rule_order_never_changes_a_decision(rules in prop::collection::vec(rule(), 0..6), level in autonomy(), c in call(), seed in any::<u64>()) {
        let before = judge(rules.clone(), level, None, &c);
        let mut shuffled = rules;
        // A deterministic shuffle from the seed.
        let len = shuffled.len();
        for i in (1..len).rev() {
            let j = usize::try_from(seed.rotate_left(u32::try_from(i).unwrap_or(0)) % (i as u64 + 1)).unwrap_or(0);
            shuffled.swap(i, j);
        }
        prop_assert_eq!(judge(shuffled, level, None, &c), before);
    }

    #[test]
    fn a_kinds_file_entry_always_wins(name in prop::sample::select(TOOLS.iter().map(|(n, _)| *n).collect::<Vec<_>>()), k in kind(), infer in any::<bool>()) {
        let mut file = KindsFile::new(infer);
        file.tools.insert(name.to_owned(), KindEntry { kind: k, source: KindSource::You, reason: String::new() });
        let mut catalogue_tools = catalogue().tools().to_vec();
        for t in &mut catalogue_tools {
            t.marks.egress = true;
        }
        let guard = Guard::new(GuardConfig {
            catalogue: Catalogue::new(catalogue_tools).unwrap(),
            kinds: Some(file),
            inference: Inference::On,
            policy: Policy::default(),
            autonomy: Autonomy::Supervised,
        });
        let c = guard.classification(name).unwrap();
        prop_assert_eq!((c.kind, c.source), (k, KindSource::You));
    }
}
