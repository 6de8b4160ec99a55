//! `purko analyze`: findings as JSON lines with the file as given, the pre-execution verdict,
//! the text format, and exit codes.

use super::purko;

const CORPUS: &str = "crates/purko-analysis/tests/corpus";

#[test]
fn findings_are_json_lines_naming_the_file_as_given() {
    let file = format!("{CORPUS}/must_catch/py_network.py");
    let out = purko(&["analyze", &file]);
    assert!(out.starts_with("exit: 0\n"), "{out}");
    let stdout = out
        .split("--- stdout\n")
        .nth(1)
        .unwrap()
        .split("--- stderr\n")
        .next()
        .unwrap();
    let lines: Vec<serde_json::Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 5, "{stdout}");
    let first = lines[0].as_object().unwrap();
    let mut keys: Vec<&str> = first.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "column",
            "confidence",
            "cwe",
            "file",
            "kind",
            "line",
            "message",
            "rule",
            "severity"
        ]
    );
    assert_eq!(first["file"], file.as_str());
    assert_eq!(first["rule"], "B402");
    assert_eq!(first["severity"], "HIGH");
}

#[test]
fn a_folder_is_searched_and_clean_files_print_nothing() {
    let out = purko(&["analyze", &format!("{CORPUS}/clean")]);
    assert_eq!(out, "exit: 0\n--- stdout\n--- stderr\n");
}

#[test]
fn the_text_format_is_one_line_per_finding() {
    let file = format!("{CORPUS}/must_catch/py_ctypes.py");
    let out = purko(&["analyze", "--format", "text", &file]);
    assert!(
        out.contains(&format!(
            "{file}:3:8: MEDIUM PK301 unsafe-code ctypes.CDLL: ctypes calls native code"
        )),
        "{out}"
    );
}

#[test]
fn an_unreadable_file_exits_1_after_the_others() {
    let file = format!("{CORPUS}/must_catch/py_ctypes.py");
    let out = purko(&["analyze", "missing.py", &file]);
    assert!(out.starts_with("exit: 1\n"), "{out}");
    assert!(out.contains("\"rule\":\"PK301\""), "{out}");
    assert!(out.contains("error: cannot read missing.py"), "{out}");
    assert!(out.contains("hint: "), "{out}");
}

#[test]
fn check_prints_one_verdict_per_file() {
    let dir = std::env::temp_dir().join(format!("purko-analyze-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let bad = dir.join("bad.py");
    let good = dir.join("good.sh");
    std::fs::write(&bad, "import os as o\no.system('id')  # nosec\n").unwrap();
    std::fs::write(&good, "ls -la | wc -l\n").unwrap();
    let out = purko(&[
        "analyze",
        "--check",
        bad.to_str().unwrap(),
        good.to_str().unwrap(),
    ]);
    assert!(out.starts_with("exit: 0\n"), "{out}");
    let expected_bad = serde_json::json!({
        "file": bad.to_str().unwrap(),
        "verdict": "reject",
        "hits": [{"line": 2, "api": "os.system", "why": "runs a shell command (reached as `o.system`)"}]
    });
    let expected_good =
        serde_json::json!({"file": good.to_str().unwrap(), "verdict": "allow", "hits": []});
    let stdout: Vec<serde_json::Value> = out
        .lines()
        .filter(|l| l.starts_with('{'))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(stdout, [expected_bad, expected_good]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn usage_errors_exit_2_with_a_hint() {
    let out = purko(&["analyze", "--format", "xml", "a.py"]);
    assert!(out.starts_with("exit: 2\n"), "{out}");
    assert!(out.contains("hint: run `purko analyze --help`"), "{out}");
    let help = purko(&["analyze", "--help"]);
    assert!(
        help.starts_with("exit: 0\n") && help.contains("--check"),
        "{help}"
    );
}
