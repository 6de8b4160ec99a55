//! The sandbox's start-up cost: `python3 -c pass` directly and inside the sandbox, measured in
//! one process, interleaved, RUNS times each (20 unless set), after a warm-up. Prints both
//! medians, their ratio and the added milliseconds. Targets: ratio at most 1.3, added under
//! 10 ms. Run by `scripts/bench-sandbox`.

#![allow(
    clippy::print_stdout,
    reason = "a benchmark reports on standard output"
)]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use purko_config::{CodeExecution, Language, Sandbox};
use purko_sandbox::{Host, Plan, Weaker};

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn direct() -> Duration {
    let started = Instant::now();
    let status = Command::new("/usr/bin/python3")
        .args(["-I", "-c", "pass"])
        .env_clear()
        .env("PATH", "/usr/bin:/bin")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .expect("python3 runs");
    assert!(status.status.success());
    started.elapsed()
}

fn main() {
    #[expect(clippy::disallowed_methods, reason = "a benchmark's own knob")]
    let runs: usize = std::env::var("RUNS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(20);
    let config = CodeExecution {
        enabled: true,
        languages: vec![Language::Python],
        sandbox: Sandbox {
            max_execution_seconds: 10,
            max_output_bytes: 10_000,
            network_access: false,
            writable_paths: vec![PathBuf::from("/tmp")],
            accept_weaker: false,
        },
        ..CodeExecution::default()
    };
    let host = Host::probe();
    let plan = Plan::new(&config, Language::Python, &host, Weaker::Refuse).expect("a plan");
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let sandboxed = || {
        let started = Instant::now();
        let outcome = runtime
            .block_on(purko_sandbox::run(&plan, "pass", None))
            .expect("the sandbox runs");
        assert_eq!(outcome.exit_code, Some(0), "{outcome:?}");
        started.elapsed()
    };
    for _ in 0..3 {
        direct();
        sandboxed();
    }
    let (mut outside, mut inside) = (Vec::new(), Vec::new());
    for _ in 0..runs {
        outside.push(direct());
        inside.push(sandboxed());
    }
    let (outside, inside) = (median(outside), median(inside));
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("python3 -c pass, median of {runs}:");
    println!("  outside the sandbox  {:7.2} ms", ms(outside));
    println!("  inside the sandbox   {:7.2} ms", ms(inside));
    println!(
        "  ratio                {:7.2}   (target <= 1.30)",
        ms(inside) / ms(outside)
    );
    println!(
        "  added                {:7.2} ms (target < 10 ms)",
        ms(inside) - ms(outside)
    );
}
