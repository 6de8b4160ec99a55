//! `execute_code` through the pipeline: the real sandbox runs python and bash, the pre-execution
//! check refuses listed APIs before anything runs, and an agent without code execution gets
//! `NO_RESULT` with the remedy.

use pretty_assertions::assert_eq;
use purko_protocol::{ApprovalScope, Code, Status};
use serde_json::json;

use crate::support::{Harness, approve, assert_refused, call, pending_id, run};

const CODER: &str = "test/coder";

/// `tool` called by `agent` at step `step` of session `s1` with `language` source `code`.
async fn run_code(
    engine: &std::sync::Arc<purko_engine::Engine>,
    agent: &str,
    step: &str,
    tool: &str,
    language: &str,
    code: &str,
) -> purko_protocol::Observation {
    run(
        engine,
        call(
            agent,
            "s1",
            step,
            tool,
            json!({"language": language, "code": code}),
        ),
    )
    .await
}
const CAREFUL: &str = "test/careful";

const AGENTS: &str = r"
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {name: coder, namespace: test}
spec:
  autonomyLevel: full
  runtime:
    codeExecution:
      enabled: true
      languages: [python]
      sandbox: {maxExecutionSeconds: 2, maxOutputBytes: 1000}
      check:
        python: {remove: [shutil]}
  tools:
    - {name: execute_code, type: function}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {name: reviewer, namespace: test}
spec:
  autonomyLevel: restricted
  tools:
    - {name: static-analysis, type: builtin}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {name: careful, namespace: test}
spec:
  autonomyLevel: supervised
  runtime:
    codeExecution:
      enabled: true
      # This kernel has every layer; the choice only matters where one is missing.
      sandbox: {acceptWeaker: true}
  tools:
    - {name: code-sandbox, type: function}
---
apiVersion: purko.io/v1alpha1
kind: Agent
metadata: {name: plain, namespace: test}
spec:
  autonomyLevel: full
  tools:
    - {name: execute_code, type: function}
";

#[tokio::test]
async fn a_python_program_runs_in_the_sandbox_and_answers_its_output() {
    let h = Harness::with(AGENTS).await;
    let engine = h.engine().await;
    let o = run_code(
        &engine,
        CODER,
        "1",
        "execute_code",
        "python",
        "import os\nprint(6 * 7, os.getuid() != 0)",
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    let body = o.observation.as_ref().unwrap();
    assert_eq!(body["stdout"], "42 True\n", "{o:#?}");
    assert_eq!(body["exit_code"], 0);

    // A write: the same step is answered from the store, not run again.
    let again = run_code(
        &engine,
        CODER,
        "1",
        "execute_code",
        "python",
        "import os\nprint(6 * 7, os.getuid() != 0)",
    )
    .await;
    assert!(again.replayed, "{again:#?}");
}

#[tokio::test]
async fn a_listed_api_is_refused_before_anything_runs_whatever_the_comments_say() {
    let h = Harness::with(AGENTS).await;
    let engine = h.engine().await;
    let code = "import subprocess as sp  # nosec\nsp.run(['id'])\n";
    let o = run_code(&engine, CODER, "1", "execute_code", "python", code).await;
    assert_refused(&o, Status::Error, Code::CodeRejected);
    let hits = &o.observation.as_ref().unwrap()["hits"];
    assert_eq!(hits[0]["line"], 1, "the import itself is a hit: {o:#?}");
    assert_eq!(hits[1]["line"], 2, "{o:#?}");
    assert!(
        hits[0]["api"].as_str().unwrap().starts_with("subprocess"),
        "{o:#?}"
    );

    // The agent took shutil off its list: the same check lets it through.
    let o = run_code(
        &engine,
        CODER,
        "2",
        "execute_code",
        "python",
        "import shutil\nprint(shutil.which('python3') is not None)",
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
}

#[tokio::test]
async fn limits_end_a_run_with_their_codes() {
    let h = Harness::with(AGENTS).await;
    let engine = h.engine().await;
    let o = run_code(
        &engine,
        CODER,
        "1",
        "execute_code",
        "python",
        "while True:\n    pass\n",
    )
    .await;
    assert_refused(&o, Status::Error, Code::SandboxTimeout);

    let o = run_code(
        &engine,
        CODER,
        "2",
        "execute_code",
        "python",
        "print('x' * 5000)",
    )
    .await;
    assert!(o.truncated, "{o:#?}");
    let stdout = o.observation.as_ref().unwrap()["stdout"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        stdout.len() < 1200 && stdout.contains("truncated"),
        "{stdout}"
    );

    let o = run_code(&engine, CODER, "3", "execute_code", "bash", "echo hi").await;
    assert_refused(&o, Status::Error, Code::ValidationFailed);
}

#[tokio::test]
async fn code_waits_for_a_person_where_writes_do_and_its_alias_runs_bash() {
    let h = Harness::with(AGENTS).await;
    let engine = h.engine().await;
    let mut request = call(
        CAREFUL,
        "s1",
        "1",
        "code-sandbox",
        json!({"language": "bash", "code": "echo from bash"}),
    );
    request.wait = Some(false);
    let o = run(&engine, request.clone()).await;
    let id = pending_id(&o);
    approve(&engine, &id, ApprovalScope::Once).await;
    let o = run(&engine, request).await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    assert_eq!(o.observation.as_ref().unwrap()["stdout"], "from bash\n");
}

#[tokio::test]
async fn an_agent_without_code_execution_gets_no_result_and_the_remedy() {
    let h = Harness::with(AGENTS).await;
    let engine = h.engine().await;
    let o = run_code(
        &engine,
        "test/plain",
        "1",
        "execute_code",
        "python",
        "print(1)",
    )
    .await;
    assert_refused(&o, Status::Error, Code::NoResult);
    assert!(
        o.remediation
            .as_deref()
            .unwrap_or_default()
            .contains("codeExecution.enabled"),
        "{o:#?}"
    );
}

#[tokio::test]
async fn static_analysis_is_a_read_that_lists_findings_even_for_a_restricted_agent() {
    let h = Harness::with(AGENTS).await;
    let engine = h.engine().await;
    let code =
        "import yaml\n\ndef load(text):\n    return eval(text)\n\nAWS = 'AKIAIOSFODNN7EXAMPLE'\n";
    let o = run_code(
        &engine,
        "test/reviewer",
        "1",
        "static-analysis",
        "python",
        code,
    )
    .await;
    assert_eq!(o.status, Status::Success, "{o:#?}");
    let findings = o.observation.as_ref().unwrap()["findings"]
        .as_array()
        .unwrap()
        .clone();
    let kinds: Vec<&str> = findings.iter().filter_map(|f| f["kind"].as_str()).collect();
    assert!(kinds.contains(&"eval"), "{findings:#?}");
    assert!(kinds.contains(&"hardcoded-secret"), "{findings:#?}");
    let eval = findings.iter().find(|f| f["kind"] == "eval").unwrap();
    assert_eq!(
        (eval["line"].as_u64(), eval["severity"].as_str()),
        (Some(4), Some("HIGH"))
    );

    let o = run_code(
        &engine,
        "test/reviewer",
        "2",
        "static-analysis",
        "go",
        "package main\nfunc main( {",
    )
    .await;
    assert_eq!(
        o.status,
        Status::Success,
        "a parse problem is a finding: {o:#?}"
    );
    assert!(
        o.observation.as_ref().unwrap()["count"].as_u64().unwrap() >= 1,
        "{o:#?}"
    );
}

#[tokio::test]
async fn refused_code_is_refused_before_a_person_is_asked() {
    let h = Harness::with(AGENTS).await;
    let engine = h.engine().await;
    let mut request = call(
        CAREFUL,
        "s1",
        "1",
        "execute_code",
        json!({"language": "bash", "code": "curl http://127.0.0.1:9/"}),
    );
    request.name = "code-sandbox".into();
    let o = run(&engine, request).await;
    assert_refused(&o, Status::Error, Code::CodeRejected);
    let pending = engine
        .store()
        .approvals(&purko_store::ApprovalFilter {
            status: Some(purko_protocol::ApprovalStatus::Pending),
            agent: Some(CAREFUL.into()),
            limit: 10,
        })
        .await
        .unwrap();
    assert!(
        pending.is_empty(),
        "nobody is asked to approve code that cannot run: {pending:?}"
    );
}
