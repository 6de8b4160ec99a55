use std::path::PathBuf;

use purko_config::{CodeExecution, Language, Sandbox};
use purko_sandbox::{Host, Outcome, Plan, Weaker};

pub fn config(seconds: u64, output: u64, writable: &[&str], network: bool) -> CodeExecution {
    CodeExecution {
        enabled: true,
        languages: vec![Language::Python, Language::Bash],
        sandbox: Sandbox {
            max_execution_seconds: seconds,
            max_output_bytes: output,
            network_access: network,
            writable_paths: writable.iter().map(PathBuf::from).collect(),
            accept_weaker: false,
        },
        ..CodeExecution::default()
    }
}

pub fn host() -> Host {
    static HOST: std::sync::OnceLock<Host> = std::sync::OnceLock::new();
    HOST.get_or_init(Host::probe).clone()
}

pub fn plan(language: Language, config: &CodeExecution) -> Plan {
    Plan::new(config, language, &host(), Weaker::Refuse).expect("this machine has every layer")
}

pub async fn python(code: &str) -> Outcome {
    run(
        Language::Python,
        &config(10, 100_000, &["/tmp"], false),
        code,
    )
    .await
}

pub async fn bash(code: &str) -> Outcome {
    run(Language::Bash, &config(10, 100_000, &["/tmp"], false), code).await
}

pub async fn run(language: Language, config: &CodeExecution, code: &str) -> Outcome {
    let plan = plan(language, config);
    purko_sandbox::run(&plan, code, None)
        .await
        .expect("the sandbox starts")
}
