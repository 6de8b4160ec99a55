use pretty_assertions::assert_eq;

use crate::support::{bash, python};

#[tokio::test(flavor = "multi_thread")]
async fn python_prints_and_exits() {
    let outcome =
        python("import sys\nprint('hello')\nprint('oops', file=sys.stderr)\nsys.exit(3)").await;
    assert_eq!(outcome.stdout, "hello\n", "{outcome:?}");
    assert_eq!(outcome.stderr, "oops\n");
    assert_eq!(outcome.exit_code, Some(3));
    assert_eq!(outcome.signal, None);
    assert_eq!(outcome.limit, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn bash_runs() {
    let outcome = bash("echo hi; id -u; hostname; ls /").await;
    assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
    println!("{outcome:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_signal_is_reported_by_name() {
    let outcome = python("import os, signal\nos.kill(os.getpid(), signal.SIGTERM)").await;
    assert_eq!(outcome.exit_code, None, "{outcome:?}");
    assert_eq!(outcome.signal.as_deref(), Some("SIGTERM"));
    assert_eq!(outcome.limit, None);
}

#[tokio::test(flavor = "multi_thread")]
async fn peak_memory_is_reported() {
    let outcome = python("data = b'x' * (100 << 20)\nprint(len(data))").await;
    assert_eq!(outcome.stdout, "104857600\n", "{outcome:?}");
    let peak = outcome.peak_memory_bytes.expect("measured");
    assert!(peak >= 100 << 20, "{peak}");
    assert!(peak < 512 << 20, "{peak}");
}

#[tokio::test(flavor = "multi_thread")]
async fn standard_input_is_empty_and_the_tmpfs_is_private() {
    let outcome = bash("cat; echo end; echo kept > /tmp/file; cat /tmp/file; pwd").await;
    assert_eq!(outcome.stdout, "end\nkept\n/tmp\n", "{outcome:?}");
    let again = bash("ls -A /tmp").await;
    assert_eq!(again.stdout, "", "each run starts with an empty tmpfs");
}

#[tokio::test(flavor = "multi_thread")]
async fn without_writable_paths_nothing_is_writable() {
    let outcome = crate::support::run(
        purko_config::Language::Bash,
        &crate::support::config(5, 1000, &[], false),
        "pwd; touch /tmp/x 2>/dev/null || echo no-tmp; touch x 2>/dev/null || echo no-cwd",
    )
    .await;
    assert_eq!(outcome.stdout, "/\nno-tmp\nno-cwd\n", "{outcome:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn many_runs_share_one_runtime() {
    let runs = (0..8).map(|i| async move { python(&format!("print({i} * 2)")).await });
    let outcomes = futures_join_all(runs).await;
    for (i, outcome) in outcomes.iter().enumerate() {
        assert_eq!(outcome.stdout, format!("{}\n", i * 2), "{outcome:?}");
    }
}

async fn futures_join_all<F: std::future::Future + Send + 'static>(
    futures: impl Iterator<Item = F>,
) -> Vec<F::Output>
where
    F::Output: Send + 'static,
{
    let handles: Vec<_> = futures.map(tokio::spawn).collect();
    let mut outputs = Vec::new();
    for handle in handles {
        outputs.push(handle.await.expect("a run"));
    }
    outputs
}

#[test]
fn outcomes_serialize_with_the_limit_in_snake_case() {
    let outcome = purko_sandbox::Outcome {
        stdout: String::new(),
        stderr: String::new(),
        exit_code: None,
        signal: Some("SIGKILL".into()),
        duration_ms: 1000,
        peak_memory_bytes: None,
        truncated: false,
        limit: Some(purko_sandbox::Limit::WallClock),
    };
    let json = serde_json::to_value(&outcome).expect("serializes");
    assert_eq!(json["limit"], "wall_clock");
    assert_eq!(json["signal"], "SIGKILL");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_cancelled_run_is_killed() {
    cancel_after(std::time::Duration::from_millis(500), "running").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_run_cancelled_while_it_starts_is_killed() {
    cancel_after(std::time::Duration::ZERO, "starting").await;
}

/// Drops a run of `sleep 30` after `delay`; its process must be gone soon after.
async fn cancel_after(delay: std::time::Duration, name: &str) {
    let plan = crate::support::plan(
        purko_config::Language::Bash,
        &crate::support::config(30, 1000, &[], false),
    );
    let marker = format!("cancel-{name}-{}", std::process::id());
    let code = format!("exec -a {marker} sleep 30");
    let cancelled = tokio::time::timeout(delay, purko_sandbox::run(&plan, &code, None)).await;
    assert!(cancelled.is_err(), "the run was still going");
    let alive = || {
        std::fs::read_dir("/proc")
            .expect("proc")
            .filter_map(Result::ok)
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .any(|cmdline| cmdline.starts_with(marker.as_bytes()))
    };
    // Long enough for a start and a kill on a busy machine, far shorter than the run's 30 s.
    for wait in [1500, 1500] {
        tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
        assert!(!alive(), "the sandboxed program outlived its cancelled run");
    }
}
