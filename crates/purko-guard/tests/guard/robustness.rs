//! Whatever comes in, nothing panics: arbitrary text as a kinds file, a rules file, a tools
//! file, a tool's name and description; arbitrary JSON as a schema and as arguments. Every call
//! still comes back as an evaluation with a decision id, and every reason stays one line.

use std::path::Path;

use proptest::prelude::*;
use purko_guard::{
    Catalogue, DestinationMap, Guard, GuardConfig, Inference, KindsFile, Policy, explain, infer,
};
use purko_protocol::{Autonomy, ToolCall, ToolSpec};
use serde_json::{Value, json};

/// Any JSON value, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        ".{0,24}".prop_map(Value::String),
        prop::sample::select(vec![
            "uri",
            "email",
            "object",
            "string",
            "https://x.example",
            "a@b.c",
            "*",
            "$ref",
            "#/$defs/x"
        ])
        .prop_map(|s| Value::String(s.to_owned())),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        let keys = prop::sample::select(vec![
            "type",
            "properties",
            "items",
            "format",
            "enum",
            "required",
            "$ref",
            "$defs",
            "anyOf",
            "to",
            "url",
            "email",
            "description",
            "additionalProperties",
            "name",
            "x",
        ]);
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::btree_map(keys, inner, 0..6).prop_map(|m| Value::Object(
                m.into_iter().map(|(k, v)| (k.to_owned(), v)).collect()
            )),
        ]
    })
}

/// Text that looks like YAML or JSON as often as not.
fn structured_text() -> impl Strategy<Value = String> {
    prop_oneof![
        ".{0,200}",
        prop::collection::vec(
            prop::sample::select(vec![
                "infer: ",
                "true",
                "false",
                "tools:",
                "\n",
                "  ",
                "    ",
                "kind: ",
                "read",
                "write",
                "sends_out",
                "source: ",
                "you",
                "reason: ",
                "\"",
                "'",
                "[",
                "]",
                "{",
                "}",
                ",",
                ":",
                "-",
                "rules:",
                "effect: ",
                "deny",
                "allow",
                "ask",
                "args: ",
                "destinations:",
                "allow: ",
                "*@x.com",
                "https://",
                "name",
                "\"name\"",
                "\t",
                "#",
                "é",
                "\u{0}",
                "&a",
                "*a",
                "!!str",
            ]),
            0..60,
        )
        .prop_map(|parts| parts.concat()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn any_text_as_a_kinds_rules_or_tools_file_is_an_answer_not_a_panic(text in structured_text()) {
        let _ = KindsFile::parse(&text, Path::new("k.yaml")).map(|f| f.to_yaml());
        let _ = Policy::parse(&text, Path::new("r.yaml"));
        let _ = Catalogue::parse(&text, Path::new("t.json"));
    }

    #[test]
    fn a_loaded_kinds_file_round_trips(text in structured_text()) {
        if let Ok(file) = KindsFile::parse(&text, Path::new("k.yaml")) {
            let written = file.to_yaml();
            let again = KindsFile::parse(&written, Path::new("k.yaml")).unwrap();
            prop_assert_eq!(&again.tools, &file.tools);
            prop_assert_eq!(again.to_yaml(), written);
        }
    }

    #[test]
    fn any_name_and_description_classify_with_a_one_line_reason(name in ".{0,40}", description in ".{0,400}", schema in json_value()) {
        let mut tool = ToolSpec::new(name, description);
        tool.input_schema = Some(schema);
        let c = infer(&tool, &DestinationMap::from_schema(tool.input_schema.as_ref()));
        prop_assert!(!c.reason.contains('\n'), "{}", c.reason);
    }

    #[test]
    fn any_schema_and_arguments_give_an_evaluation(schema in json_value(), arguments in json_value(), name in prop::sample::select(vec!["t", "missing"])) {
        let mut tool = ToolSpec::new("t", "Get a thing");
        tool.input_schema = Some(schema);
        let guard = Guard::new(GuardConfig {
            catalogue: Catalogue::new(vec![tool]).unwrap(),
            kinds: None,
            inference: Inference::On,
            policy: Policy::parse("rules:\n  - effect: deny\n    args: { to: \"*evil*\" }\n", Path::new("r.yaml")).unwrap(),
            autonomy: Autonomy::Supervised,
        });
        let e = guard.evaluate(&ToolCall::new(name, arguments));
        prop_assert!(e.decision_id.as_str().starts_with("d_"));
        prop_assert!(!explain(&e).is_empty());
        let _ = json!(e);
    }
}
