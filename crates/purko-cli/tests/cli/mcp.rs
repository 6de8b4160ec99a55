//! `purko mcp`: its help, and which agent it drafts for.

use std::process::Command;

fn run(args: &[&str], dir: &std::path::Path) -> (i32, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_purko"))
        .args(args)
        .current_dir(dir)
        .env("PURKO_HOME", dir.join("home"))
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn mcp_has_help_and_an_ambiguous_agent_is_a_usage_error() {
    let dir = std::env::temp_dir().join(format!("purko-cli-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();

    let (code, out, _) = run(&["mcp", "--help"], &dir);
    assert_eq!(code, 0, "{out}");
    assert!(out.contains("Usage: purko mcp"), "{out}");
    for word in [
        "writes_file",
        "set_tool_kinds",
        "explain_decision",
        "--agent",
    ] {
        assert!(out.contains(word), "{word} is not in\n{out}");
    }

    let agents = "apiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: one, namespace: test}\nspec: {autonomyLevel: supervised}\n---\napiVersion: purko.io/v1alpha1\nkind: Agent\nmetadata: {name: two, namespace: test}\nspec: {autonomyLevel: supervised}\n";
    std::fs::write(dir.join("agents.yaml"), agents).unwrap();
    let (code, out, err) = run(&["mcp", "agents.yaml"], &dir);
    assert_eq!(code, 2, "{out}{err}");
    assert!(out.is_empty(), "standard output is the protocol: {out}");
    assert!(err.contains("several agents (test/one, test/two)"), "{err}");
    assert!(
        err.contains("hint: pass --agent <namespace>/<name>"),
        "{err}"
    );

    let (code, _, err) = run(&["mcp", "agents.yaml", "--agent", "test/three"], &dir);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("no agent named 'test/three'"), "{err}");

    let _ = std::fs::remove_dir_all(&dir);
}
