//! `purko exec`: the observation of a real sandboxed run, and its exit codes.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::Value;

/// Runs `purko exec ARGS -` with `code` on standard input: (exit code, stdout, stderr).
fn exec(args: &[&str], code: &str) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_purko"))
        .arg("exec")
        .args(args)
        .arg("-")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(code.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn exec_prints_the_observation_of_a_run() {
    let (code, stdout, stderr) = exec(
        &["--language", "python"],
        "import sys\nprint('out')\nprint('err', file=sys.stderr)\n",
    );
    assert_eq!(code, 0, "{stderr}");
    let observation: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(observation["status"], "success");
    assert_eq!(observation["observation"]["stdout"], "out\n");
    assert_eq!(observation["observation"]["stderr"], "err\n");
    assert_eq!(observation["observation"]["exit_code"], 0);
    assert_eq!(observation["observation"]["signal"], Value::Null);
    assert_eq!(observation["observation"]["truncated"], false);
    assert!(
        observation["observation"]["peak_memory_bytes"]
            .as_u64()
            .unwrap()
            > 0
    );
}

#[test]
fn a_failing_program_exits_1_with_its_observation() {
    let (code, stdout, _) = exec(&["--language", "bash", "--no-check"], "exit 7");
    assert_eq!(code, 1);
    let observation: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(observation["status"], "success");
    assert_eq!(observation["observation"]["exit_code"], 7);
}

#[test]
fn a_timeout_is_sandbox_timeout() {
    let (code, stdout, _) = exec(&["--language", "bash", "--timeout", "1"], "sleep 10");
    assert_eq!(code, 1);
    let observation: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(observation["status"], "error");
    assert_eq!(observation["code"], "SANDBOX_TIMEOUT");
    assert_eq!(observation["observation"]["signal"], "SIGKILL");
    assert!(observation["remediation"].as_str().is_some());
}

#[test]
fn an_output_flood_is_sandbox_limit() {
    let (code, stdout, _) = exec(&["--language", "bash", "--max-output", "100"], "yes flood");
    assert_eq!(code, 1);
    let observation: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(observation["code"], "SANDBOX_LIMIT");
    assert!(
        observation["message"]
            .as_str()
            .unwrap()
            .contains("output limit")
    );
    assert_eq!(observation["truncated"], true);
}

#[test]
fn a_relative_writable_path_is_refused_before_running() {
    let (code, stdout, stderr) = exec(&["--language", "bash", "--writable", "out"], "echo ran");
    assert_eq!(code, 1);
    assert_eq!(stdout, "");
    assert!(
        stderr.starts_with("error: the writable path out is not absolute"),
        "{stderr}"
    );
    assert!(stderr.contains("\nhint: "));
}

#[test]
fn an_unknown_language_is_a_usage_error() {
    let (code, _, stderr) = exec(&["--language", "ruby"], "puts 1");
    assert_eq!(code, 2);
    assert!(stderr.contains("hint: run `purko exec --help`"), "{stderr}");
}
