//! The `purko` binary, run for real: snapshots of what a person sees (exit code, standard
//! output, standard error) for drafts, decisions, explanations and broken input. Every file
//! under `examples/` is used here.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a broken fixture should fail the test loudly"
)]

use std::path::{Path, PathBuf};
use std::process::Command;

use purko_guard::KindsFile;

mod analyze;
mod exec;
mod mcp;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

/// Runs `purko` from the repository root and renders what it printed.
fn purko(args: &[&str]) -> String {
    let output = Command::new(env!("CARGO_BIN_EXE_purko"))
        .args(args)
        .current_dir(root())
        .output()
        .unwrap();
    format!(
        "exit: {}\n--- stdout\n{}--- stderr\n{}",
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// Decision ids end in a ULID, which differs on every run.
fn snapshot(name: &str, text: &str) {
    insta::with_settings!({ filters => vec![(r"_[0-9A-HJKMNP-TV-Z]{26}\b", "_[ULID]")] }, {
        insta::assert_snapshot!(name, text);
    });
}

const TOOLS: &str = "examples/tools.json";
const KINDS: &str = "examples/tool_kinds.yaml";
const RULES: &str = "examples/rules.yaml";

#[test]
fn every_command_has_help() {
    for args in [
        &["--help"][..],
        &["kinds", "--help"],
        &["kinds", "draft", "--help"],
        &["check", "--help"],
    ] {
        let out = purko(args);
        assert!(out.starts_with("exit: 0\n--- stdout\n"), "{out}");
        assert!(out.contains("Usage: purko"), "{out}");
    }
}

#[test]
fn a_drafted_file_lists_uncertain_tools_first() {
    snapshot(
        "draft_yaml",
        &purko(&["kinds", "draft", "--tools", TOOLS, "--tool-kinds", KINDS]),
    );
}

#[test]
fn a_draft_without_a_kinds_file_starts_with_the_uncertain() {
    snapshot(
        "draft_yaml_from_scratch",
        &purko(&["kinds", "draft", "--tools", TOOLS]),
    );
}

#[test]
fn a_draft_without_inference_is_json_of_the_same_shape() {
    snapshot(
        "draft_json_no_infer",
        &purko(&[
            "kinds",
            "draft",
            "--tools",
            TOOLS,
            "--no-infer",
            "--format",
            "json",
        ]),
    );
}

#[test]
fn a_drafted_file_loads_back_and_writes_back_the_same() {
    let dir = std::env::temp_dir().join(format!("purko-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("tool_kinds.yaml");
    let status = purko(&[
        "kinds",
        "draft",
        "--tools",
        TOOLS,
        "--out",
        out.to_str().unwrap(),
    ]);
    assert!(
        status.starts_with("exit: 0\n--- stdout\n--- stderr\n"),
        "{status}"
    );
    let text = std::fs::read_to_string(&out).unwrap();
    let loaded = KindsFile::load(&out).unwrap();
    assert_eq!(loaded.to_yaml(), text);
    // The drafted file is a valid --tool-kinds input, and it now decides every tool.
    let check = purko(&[
        "check",
        "--tools",
        TOOLS,
        "--tool-kinds",
        out.to_str().unwrap(),
        "--call",
        r#"{"name":"orders","arguments":{}}"#,
    ]);
    let source = loaded.tools["orders"].source;
    assert!(
        check.contains(&format!(r#""kind_source": "{source}""#)),
        "{check}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_decision_as_json() {
    snapshot(
        "check_json_ask",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--tool-kinds",
            KINDS,
            "--rules",
            RULES,
            "--call",
            r#"{"name":"send_email","arguments":{"to":["ann@mycompany.com"],"subject":"Hi","body":"Lunch?"}}"#,
        ]),
    );
}

#[test]
fn a_decision_explained() {
    snapshot(
        "check_text_destination_refused",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--tool-kinds",
            KINDS,
            "--rules",
            RULES,
            "--format",
            "text",
            "--call",
            r#"{"name":"send_email","arguments":{"to":["ann@mycompany.com","eve@evil.example"],"subject":"Hi","body":"x"}}"#,
        ]),
    );
    snapshot(
        "check_text_rule_allows",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--rules",
            RULES,
            "--format",
            "text",
            "--call",
            r#"{"name":"create_branch","arguments":{"repo":"myorg/app","branch":"fix"}}"#,
        ]),
    );
}

#[test]
fn refusals_are_decisions_with_exit_code_zero() {
    snapshot(
        "check_unknown_tool",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--call",
            r#"{"name":"list_issue","arguments":{}}"#,
            "--format",
            "text",
        ]),
    );
    snapshot(
        "check_invalid_arguments",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--call",
            r#"{"name":"get_weather","arguments":{"city":"Lisbon","units":"kelvin","url":"https://x.example"}}"#,
            "--format",
            "text",
        ]),
    );
    snapshot(
        "check_arguments_not_an_object",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--call",
            r#"{"name":"get_weather","arguments":["Lisbon"]}"#,
            "--format",
            "text",
        ]),
    );
    snapshot(
        "check_destination_in_a_read",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--call",
            r#"{"name":"list_issues","arguments":{"repo":"a/b","webhook":"https://x.example/hook"}}"#,
            "--format",
            "text",
        ]),
    );
    snapshot(
        "check_restricted_blocks_a_write",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--autonomy",
            "restricted",
            "--call",
            r#"{"name":"execute_code","arguments":{"code":"print(1)"}}"#,
            "--format",
            "text",
        ]),
    );
}

#[test]
fn usage_errors_exit_with_two() {
    snapshot(
        "usage_unknown_autonomy",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--autonomy",
            "sometimes",
            "--call",
            r#"{"name":"x"}"#,
        ]),
    );
    snapshot(
        "usage_malformed_call",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--call",
            r#"{"name": "x", "arguments": {"#,
        ]),
    );
    snapshot(
        "usage_call_without_name",
        &purko(&["check", "--tools", TOOLS, "--call", r#"{"arguments": {}}"#]),
    );
}

#[test]
fn unreadable_input_exits_with_one_and_a_hint() {
    snapshot(
        "error_missing_tools_file",
        &purko(&["kinds", "draft", "--tools", "no/such/tools.json"]),
    );
    snapshot(
        "error_malformed_tools",
        &purko(&[
            "kinds",
            "draft",
            "--tools",
            "crates/purko-cli/tests/data/malformed_tools.json",
        ]),
    );
    snapshot(
        "error_duplicate_tools",
        &purko(&[
            "kinds",
            "draft",
            "--tools",
            "crates/purko-cli/tests/data/duplicate_tools.json",
        ]),
    );
    snapshot(
        "error_broken_kinds_file",
        &purko(&[
            "kinds",
            "draft",
            "--tools",
            TOOLS,
            "--tool-kinds",
            "crates/purko-cli/tests/data/broken_tool_kinds.yaml",
        ]),
    );
    snapshot(
        "error_unknown_kind",
        &purko(&[
            "kinds",
            "draft",
            "--tools",
            TOOLS,
            "--tool-kinds",
            "crates/purko-cli/tests/data/unknown_kind.yaml",
        ]),
    );
    snapshot(
        "error_bad_rules",
        &purko(&[
            "check",
            "--tools",
            TOOLS,
            "--rules",
            "crates/purko-cli/tests/data/bad_rules.yaml",
            "--call",
            r#"{"name":"orders"}"#,
        ]),
    );
}
