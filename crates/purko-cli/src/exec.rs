//! `purko exec`: runs a python or bash file in the sandbox, as an agent's `execute_code` call
//! would, and prints the observation. The sandbox cannot be turned off here; `--no-check` skips
//! only the pre-execution check of the code.
//!
//! Exit codes: 0 when the program ran within its limits and exited 0; 1 when it exited
//! otherwise, was stopped by a limit, or the sandbox could not run it (the observation, or an
//! error and a hint, is printed either way); 2 for a usage error.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::PathBuf;

use purko_config::{CodeExecution, Language, Sandbox};
use purko_http::Egress;
use purko_sandbox::{Host, Outcome, Plan, Weaker};

use crate::{CheckFormat, Failure};

#[derive(clap::Args, Debug)]
pub struct ExecArgs {
    /// The program's language.
    #[arg(long, value_enum)]
    language: ExecLanguage,
    /// Wall-clock limit in seconds (`maxExecutionSeconds`); the whole sandbox is killed then.
    #[arg(long, default_value_t = 30, value_name = "S")]
    timeout: u64,
    /// Bytes kept of standard output and of standard error (`maxOutputBytes`).
    #[arg(long, default_value_t = 100_000, value_name = "BYTES")]
    max_output: u64,
    /// Allow HTTP and HTTPS, through Purko's egress proxy and guard only (`networkAccess`).
    #[arg(long)]
    network: bool,
    /// A destination the egress guard admits, as in `destinations.allow`; repeatable.
    #[arg(long = "allow", value_name = "DESTINATION", requires = "network")]
    allow: Vec<String>,
    /// An absolute path the program may write to, on its own empty tmpfs (`writablePaths`);
    /// repeatable. Nothing else is writable.
    #[arg(long = "writable", value_name = "PATH")]
    writable: Vec<PathBuf>,
    /// Skip the pre-execution check of the code, to test the sandbox's walls themselves.
    #[arg(long)]
    no_check: bool,
    /// Run even where the kernel lacks Landlock or seccomp (the missing layers are named on
    /// standard error). User namespaces are never optional.
    #[arg(long)]
    accept_weaker_sandbox: bool,
    /// Output format: the observation as JSON, or the output and a summary as text.
    #[arg(long, value_enum, default_value_t = CheckFormat::Json)]
    format: CheckFormat,
    /// The program file, or `-` for standard input.
    #[arg(value_name = "FILE|-")]
    file: String,
}

#[derive(Clone, Copy, Debug, clap::ValueEnum)]
enum ExecLanguage {
    Python,
    Bash,
}

/// Runs the program; `Ok(false)` when it ran but did not end cleanly (exit code 1).
pub fn exec(args: &ExecArgs) -> Result<bool, Failure> {
    let code = read_code(&args.file)?;
    let language = match args.language {
        ExecLanguage::Python => Language::Python,
        ExecLanguage::Bash => Language::Bash,
    };
    let config = CodeExecution {
        enabled: true,
        languages: vec![language],
        sandbox: Sandbox {
            max_execution_seconds: args.timeout,
            max_output_bytes: args.max_output,
            network_access: args.network,
            writable_paths: args.writable.clone(),
            accept_weaker: args.accept_weaker_sandbox,
        },
        ..CodeExecution::default()
    };
    let weaker = Weaker::accepted(args.accept_weaker_sandbox);
    let plan = Plan::new(&config, language, &Host::probe(), weaker).map_err(|e| {
        Failure::new(
            e.to_string(),
            "fix the flag it names; see docs/threat-model.md for the sandbox's layers",
            1,
        )
    })?;
    if let Some(weakened) = plan.weakened() {
        let _ = writeln!(
            std::io::stderr(),
            "warning: running without {weakened} (accepted with --accept-weaker-sandbox)"
        );
    }
    if !args.no_check {
        let verdict = purko_analysis::check(&code, language.into(), &config.check);
        if !verdict.allows() {
            let observation = purko_engine::rejected(&verdict);
            let text = match args.format {
                CheckFormat::Json => {
                    let mut json = serde_json::to_string_pretty(&observation).map_err(|e| {
                        Failure::new(format!("cannot encode the observation: {e}"), "retry", 1)
                    })?;
                    json.push('\n');
                    json
                }
                CheckFormat::Text => {
                    let mut text = String::new();
                    for hit in &verdict.hits {
                        let _ = writeln!(text, "line {}: {}: {}", hit.line, hit.api, hit.why);
                    }
                    let _ = writeln!(
                        text,
                        "--- CODE_REJECTED: the code was not run (--no-check skips the check)"
                    );
                    text
                }
            };
            crate::judge::print(&text)?;
            return Ok(false);
        }
    }
    let egress = if args.network {
        Some(Egress::new(&args.allow).map_err(|e| {
            Failure::new(
                e.to_string(),
                "check the --allow destinations (host, host:port or URL prefix)",
                1,
            )
        })?)
    } else {
        None
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(format!("cannot start the runtime: {e}"), "retry", 1))?;
    let outcome = runtime
        .block_on(purko_sandbox::run(&plan, &code, egress.as_ref()))
        .map_err(|e| {
            Failure::new(
                e.to_string(),
                "the kernel refused a step of the sandbox; see docs/threat-model.md for what it needs",
                1,
            )
        })?;
    let clean = outcome.limit.is_none() && outcome.exit_code == Some(0);
    let text = match args.format {
        CheckFormat::Json => {
            let observation = outcome.observation(&plan);
            let mut json = serde_json::to_string_pretty(&observation).map_err(|e| {
                Failure::new(format!("cannot encode the observation: {e}"), "retry", 1)
            })?;
            json.push('\n');
            json
        }
        CheckFormat::Text => text(&outcome, &plan),
    };
    crate::judge::print(&text)?;
    Ok(clean)
}

fn read_code(file: &str) -> Result<String, Failure> {
    let mut bytes = Vec::new();
    let read = if file == "-" {
        std::io::stdin().read_to_end(&mut bytes).map(|_| ())
    } else {
        std::fs::read(file).map(|b| bytes = b)
    };
    read.map_err(|e| {
        Failure::new(
            format!("cannot read {file}: {e}"),
            "give a readable file, or - to read the program from standard input",
            1,
        )
    })?;
    String::from_utf8(bytes).map_err(|_| {
        Failure::new(
            format!("{file} is not UTF-8 text"),
            "save the program as UTF-8",
            1,
        )
    })
}

fn text(outcome: &Outcome, plan: &Plan) -> String {
    let mut text = String::new();
    text.push_str(&outcome.stdout);
    if !outcome.stdout.is_empty() && !outcome.stdout.ends_with('\n') {
        text.push('\n');
    }
    if !outcome.stderr.is_empty() {
        text.push_str("--- stderr\n");
        text.push_str(&outcome.stderr);
        if !outcome.stderr.ends_with('\n') {
            text.push('\n');
        }
    }
    let memory = outcome.peak_memory_bytes.map_or_else(String::new, |bytes| {
        format!(", peak memory {} KiB", bytes / 1024)
    });
    let _ = writeln!(
        text,
        "--- {} ({} ms{memory})",
        outcome.summary(plan),
        outcome.duration_ms
    );
    text
}
