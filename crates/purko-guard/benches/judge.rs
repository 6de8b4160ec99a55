//! Judging one call against a catalogue of 1,000 tools and a policy of 100 rules, schema
//! validation included. The target is a median under 5 µs per call.
//!
//! Run with `cargo bench -p purko-guard --bench judge`.

use std::fmt::Write as _;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use purko_guard::{Catalogue, Guard, GuardConfig, Inference, Policy};
use purko_protocol::{Autonomy, Code, DestinationVerdict, Effect, Kind, ToolCall, ToolSpec};
use serde_json::{Value, json};

const TOOLS: usize = 1_000;
const RULES: usize = 100;

const READ_VERBS: &[&str] = &[
    "list", "get", "search", "read", "fetch", "describe", "find", "show",
];
const WRITE_VERBS: &[&str] = &[
    "create", "update", "delete", "add", "remove", "merge", "close", "rename",
];
const SEND_VERBS: &[&str] = &["send", "notify", "forward", "share", "invite"];
const NOUNS: &[&str] = &[
    "issues",
    "branch",
    "pull_request",
    "comment",
    "file",
    "user",
    "project",
    "label",
    "milestone",
    "ticket",
    "deployment",
    "invoice",
    "contact",
    "document",
    "page",
    "release",
    "workflow",
    "secret",
];
const SEND_NOUNS: &[&str] = &[
    "email",
    "message",
    "invitation",
    "report",
    "digest",
    "alert",
];
const SERVERS: &[&str] = &[
    "github_repos",
    "github_issues",
    "jira_cloud",
    "linear_app",
    "notion_docs",
];

/// The tools' names, so the rules can name some of them exactly.
fn tool_name(i: usize) -> String {
    let bare = match i % 10 {
        // Half read, three tenths write, one fifth sends out.
        0..=4 => format!(
            "{}_{}_{i}",
            READ_VERBS[(i / 10) % READ_VERBS.len()],
            NOUNS[(i / 3) % NOUNS.len()]
        ),
        5..=7 => format!(
            "{}_{}_{i}",
            WRITE_VERBS[(i / 10 + i) % WRITE_VERBS.len()],
            NOUNS[(i / 7) % NOUNS.len()]
        ),
        _ => format!(
            "{}_{}_{i}",
            SEND_VERBS[(i / 10 + i) % SEND_VERBS.len()],
            SEND_NOUNS[(i / 11) % SEND_NOUNS.len()]
        ),
    };
    // Every fourth tool comes from a named server, as a gateway prefixes them.
    if i % 4 == 3 {
        format!("{}/{bare}", SERVERS[(i / 4) % SERVERS.len()])
    } else {
        bare
    }
}

fn read_schema(i: usize) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "repo".into(),
        json!({"type": "string", "description": "Repository as owner/name", "minLength": 3}),
    );
    properties.insert(
        "state".into(),
        json!({"type": "string", "enum": ["open", "closed", "all"], "default": "open"}),
    );
    properties.insert(
        "per_page".into(),
        json!({"type": "integer", "minimum": 1, "maximum": 100, "description": "Results per page"}),
    );
    let extra = i % 4; // 3 to 6 properties
    if extra >= 1 {
        properties.insert(
            "sort".into(),
            json!({"type": "string", "enum": ["created", "updated", "comments"]}),
        );
    }
    if extra >= 2 {
        properties.insert(
            "filter".into(),
            json!({
                "type": "object",
                "description": "Narrow the results",
                "properties": {
                    "labels": {"type": "array", "items": {"type": "string"}},
                    "assignee": {"type": "string"},
                    "since": {"type": "string", "format": "date-time"}
                },
                "additionalProperties": false
            }),
        );
    }
    if extra >= 3 {
        properties.insert("page".into(), json!({"type": "integer", "minimum": 1}));
    }
    json!({"type": "object", "properties": properties, "required": ["repo"], "additionalProperties": false})
}

fn write_schema(i: usize) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "repo".into(),
        json!({"type": "string", "description": "Repository as owner/name"}),
    );
    properties.insert(
        "title".into(),
        json!({"type": "string", "minLength": 1, "maxLength": 256}),
    );
    properties.insert(
        "body".into(),
        json!({"type": "string", "description": "Markdown body"}),
    );
    let extra = i % 4;
    if extra >= 1 {
        properties.insert(
            "visibility".into(),
            json!({"type": "string", "enum": ["public", "private", "internal"]}),
        );
    }
    if extra >= 2 {
        properties.insert(
            "metadata".into(),
            json!({
                "type": "object",
                "properties": {
                    "namespace": {"type": "string"},
                    "labels": {"type": "array", "items": {"type": "string"}, "maxItems": 20},
                    "draft": {"type": "boolean"}
                },
                "required": ["namespace"]
            }),
        );
    }
    if extra >= 3 {
        properties.insert("base".into(), json!({"type": "string", "default": "main"}));
    }
    json!({"type": "object", "properties": properties, "required": ["repo", "title"], "additionalProperties": false})
}

fn send_schema(i: usize) -> Value {
    let mut properties = serde_json::Map::new();
    properties.insert(
        "to".into(),
        json!({"type": "string", "format": "email", "description": "Recipient"}),
    );
    properties.insert(
        "subject".into(),
        json!({"type": "string", "maxLength": 200}),
    );
    properties.insert("body".into(), json!({"type": "string"}));
    let extra = i % 4;
    if extra >= 1 {
        properties.insert("cc".into(), json!({"type": "array", "items": {"type": "string", "format": "email"}, "maxItems": 10}));
    }
    if extra >= 2 {
        properties.insert(
            "priority".into(),
            json!({"type": "string", "enum": ["low", "normal", "high"]}),
        );
    }
    if extra >= 3 {
        properties.insert(
            "callback_url".into(),
            json!({"type": "string", "format": "uri", "description": "Where delivery receipts go"}),
        );
    }
    json!({"type": "object", "properties": properties, "required": ["to", "subject"], "additionalProperties": false})
}

fn tool(i: usize) -> ToolSpec {
    let name = tool_name(i);
    let (description, schema, annotations) = match i % 10 {
        0..=4 => (
            format!(
                "List or read {} of a repository, filtered by state. Read-only.",
                NOUNS[(i / 3) % NOUNS.len()].replace('_', " ")
            ),
            read_schema(i),
            json!({"readOnlyHint": true}),
        ),
        5..=7 => (
            format!(
                "Create or change a {} in a repository.",
                NOUNS[(i / 7) % NOUNS.len()].replace('_', " ")
            ),
            write_schema(i),
            json!({"readOnlyHint": false, "destructiveHint": i.is_multiple_of(3)}),
        ),
        _ => (
            format!(
                "Send a {} to a recipient by email.",
                SEND_NOUNS[(i / 11) % SEND_NOUNS.len()]
            ),
            send_schema(i),
            json!({"openWorldHint": true}),
        ),
    };
    serde_json::from_value(json!({
        "name": name,
        "description": description,
        "inputSchema": schema,
        "annotations": annotations,
    }))
    .expect("a tool")
}

/// 100 rules: exact names, verb globs, server globs, kinds, argument globs and catch-alls.
fn rules_yaml() -> String {
    let mut text = String::from("rules:\n");
    let effects = ["allow", "ask", "deny"];
    // The rule the write benchmark relies on comes first.
    text.push_str("  - effect: allow\n    tools: [\"create_*\"]\n    kinds: [write]\n    args: { repo: \"myorg/*\" }\n    reason: \"creating things in our org is fine\"\n");
    text.push_str("  - effect: allow\n    tools: [\"send_*\"]\n    kinds: [sends_out]\n    args: { to: \"*@mycompany.com\" }\n    reason: \"mail to colleagues\"\n");
    text.push_str("  - effect: deny\n    tools: [\"*\"]\n    args: { metadata.namespace: \"production\" }\n    reason: \"nothing touches production\"\n");
    text.push_str("  - effect: ask\n    tools: [\"github_*/*\"]\n    kinds: [write]\n    reason: \"GitHub changes need review\"\n");
    let mut n = 4;
    while n < RULES {
        let effect = effects[n % 3];
        let _ = match n % 5 {
            // Exact names.
            0 => writeln!(
                text,
                "  - effect: {effect}\n    tools: [\"{}\", \"{}\"]\n    reason: \"rule {n} names these tools\"",
                tool_name((n * 37) % TOOLS),
                tool_name((n * 53 + 11) % TOOLS)
            ),
            // Verb-and-noun globs.
            1 => writeln!(
                text,
                "  - effect: {effect}\n    tools: [\"{verb}_{noun}_*\", \"*/{verb}_{noun}_*\"]\n    kinds: [{}]",
                ["write", "sends_out"][n % 2],
                verb = WRITE_VERBS[n % WRITE_VERBS.len()],
                noun = NOUNS[(n / 5) % NOUNS.len()],
            ),
            // Server globs.
            2 => writeln!(
                text,
                "  - effect: {effect}\n    tools: [\"{}/*\"]\n    kinds: [read, write]\n    reason: \"{} tools\"",
                SERVERS[n % SERVERS.len()],
                SERVERS[n % SERVERS.len()]
            ),
            // Argument globs.
            3 => writeln!(
                text,
                "  - effect: {effect}\n    tools: [\"*_{}_*\"]\n    args: {{ repo: \"team{n}/*\", visibility: \"p*\" }}",
                NOUNS[(n / 5) % NOUNS.len()]
            ),
            // Catch-alls that look at one argument.
            _ => writeln!(
                text,
                "  - effect: {}\n    args: {{ body: \"*SECRET-{n}*\" }}\n    reason: \"a marked secret in the body\"",
                ["deny", "ask"][n % 2]
            ),
        };
        n += 1;
    }
    text.push_str("destinations:\n  allow: [\"*@mycompany.com\", \"*@partner.example\", \"https://hooks.slack.com/services/T000/*\", \"ops.mycompany.com\"]\n");
    text
}

fn guard() -> Guard {
    let catalogue = Catalogue::new((0..TOOLS).map(tool).collect()).expect("unique names");
    let policy = Policy::parse(&rules_yaml(), Path::new("rules.yaml")).expect("rules compile");
    assert_eq!(policy.rules().len(), RULES);
    Guard::new(GuardConfig {
        catalogue,
        kinds: None,
        inference: Inference::On,
        policy,
        autonomy: Autonomy::Supervised,
    })
}

fn bench(c: &mut Criterion) {
    let guard = guard();

    // A read tool, a write tool that rule 1 allows, a send tool.
    let read_tool = (0..TOOLS)
        .map(tool_name)
        .find(|n| n.starts_with("list_issues_"))
        .expect("a list_issues_ tool");
    let write_tool = (0..TOOLS)
        .map(tool_name)
        .find(|n| n.starts_with("create_"))
        .expect("a create_ tool");
    let send_tool = (0..TOOLS)
        .map(tool_name)
        .find(|n| n.starts_with("send_"))
        .expect("a send_ tool");
    assert_eq!(
        guard.classification(&read_tool).map(|c| c.kind),
        Some(Kind::Read),
        "{read_tool}"
    );
    assert_eq!(
        guard.classification(&write_tool).map(|c| c.kind),
        Some(Kind::Write),
        "{write_tool}"
    );
    assert_eq!(
        guard.classification(&send_tool).map(|c| c.kind),
        Some(Kind::SendsOut),
        "{send_tool}"
    );

    let read_call = ToolCall::new(
        &read_tool,
        json!({"repo": "myorg/api", "state": "open", "per_page": 30}),
    );
    let write_call = ToolCall::new(
        &write_tool,
        json!({"repo": "myorg/api", "title": "Release 1.4", "body": "Cut from main."}),
    );
    let send_call = ToolCall::new(
        &send_tool,
        json!({"to": "ann@mycompany.com", "subject": "Weekly report", "body": "Numbers attached."}),
    );
    let invalid_call = ToolCall::new(
        &read_tool,
        json!({"state": "pending", "per_page": "thirty", "colour": "red"}),
    );
    let unknown_call = ToolCall::new(
        read_tool.replacen("issues", "isues", 1),
        json!({"repo": "myorg/api"}),
    );

    // Warm the lazily compiled schemas and check each call judges as intended.
    let e = guard.evaluate(&read_call);
    assert_eq!((e.effect, e.code), (Effect::Allow, None), "{:?}", e.reasons);
    let e = guard.evaluate(&write_call);
    assert_eq!(e.effect, Effect::Allow, "{:?}", e.reasons);
    assert!(
        e.matched_rules
            .iter()
            .any(|r| r.rule == 1 && r.args.get("repo").is_some_and(|v| v == "myorg/api"))
    );
    let e = guard.evaluate(&send_call);
    assert_eq!(e.effect, Effect::Allow, "{:?}", e.reasons);
    assert!(
        matches!(e.destinations.as_slice(), [d] if matches!(d.verdict, DestinationVerdict::Allowed { .. }))
    );
    let e = guard.evaluate(&invalid_call);
    assert_eq!(
        (e.effect, e.code),
        (Effect::Deny, Some(Code::ValidationFailed))
    );
    assert!(e.validation_errors.len() >= 3, "{:?}", e.validation_errors);
    let e = guard.evaluate(&unknown_call);
    assert_eq!((e.effect, e.code), (Effect::Deny, Some(Code::ToolNotFound)));
    assert!(
        e.remediation
            .as_deref()
            .is_some_and(|r| r.contains(read_tool.as_str())),
        "{:?}",
        e.remediation
    );

    let mut group = c.benchmark_group("judge");
    group
        .measurement_time(Duration::from_secs(5))
        .warm_up_time(Duration::from_secs(1))
        .sample_size(100);
    for (id, call) in [
        ("read_call_valid", &read_call),
        ("write_call_rule_match", &write_call),
        ("sends_out_allowlist", &send_call),
        ("invalid_arguments", &invalid_call),
        ("unknown_tool", &unknown_call),
    ] {
        group.bench_function(id, |b| b.iter(|| guard.evaluate(black_box(call))));
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
