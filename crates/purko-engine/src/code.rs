//! `execute_code` and its alias `code-sandbox` (seed 000's function tools): a python or bash
//! program run in the sandbox. Off unless the agent's `codeExecution.enabled`; marked a write in
//! the catalogue, so it is judged, approved and run once like any write. Before it runs, the
//! pre-execution check parses it and refuses the agent's listed APIs (`CODE_REJECTED`). The
//! sandbox is the only place it runs, and the sandbox refuses (with the layer it lacks) rather
//! than run unconfined.

use std::sync::{Arc, OnceLock};

use purko_analysis::{CheckList, Verdict};
use purko_config::{CodeExecution, Language};
use purko_http::Egress;
use purko_protocol::{Code, Marks, Observation, ToolSpec};
use purko_sandbox::{Host, Network, Plan, Weaker};
use serde_json::{Value, json};

/// The names seed 000 gives the code tool.
pub const CODE_TOOLS: [&str; 2] = ["execute_code", "code-sandbox"];

/// What the kernel offers the sandbox, probed once per process (it starts a throwaway child).
fn host() -> &'static Host {
    static HOST: OnceLock<Host> = OnceLock::new();
    HOST.get_or_init(Host::probe)
}

/// One agent's code tool.
#[derive(Debug)]
pub struct CodeTool {
    config: CodeExecution,
    /// The agent's check lists, shared with the blocking thread that checks each program.
    check: Arc<CheckList>,
}

impl CodeTool {
    pub fn new(config: CodeExecution) -> Self {
        let check = Arc::new(config.check.clone());
        Self { config, check }
    }

    /// The tool as the catalogue lists it: `code` and `language` (one of the enabled ones).
    pub fn spec(&self, name: &str, description: Option<&str>) -> ToolSpec {
        let languages: Vec<&str> = self.config.languages.iter().map(|l| l.as_str()).collect();
        let mut spec = ToolSpec::new(
            name.to_owned(),
            description.map_or_else(
                || {
                    format!(
                        "Runs a {} program in a sandbox with no access to the host and returns its standard output, standard error and exit status. Network: {}.",
                        languages.join(" or "),
                        if self.config.sandbox.network_access {
                            "HTTP and HTTPS through Purko's egress guard only"
                        } else {
                            "none"
                        }
                    )
                },
                str::to_owned,
            ),
        );
        spec.input_schema = Some(json!({
            "type": "object",
            "properties": {
                "code": {"type": "string", "description": "the whole program"},
                "language": {"type": "string", "enum": languages},
            },
            "required": ["code", "language"],
            "additionalProperties": false,
        }));
        spec.marks = Marks {
            destructive: true,
            ..Marks::default()
        };
        spec
    }

    /// The pre-execution check of the call's program: `Some` (`CODE_REJECTED` with the hits)
    /// when it may not run. Every run asks it; the pipeline asks it first when the call would
    /// otherwise be put to a person.
    pub async fn check(&self, arguments: &Value) -> Option<Observation> {
        let language = arguments
            .get("language")
            .and_then(Value::as_str)
            .and_then(Language::parse)?;
        let program = arguments
            .get("code")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let list = Arc::clone(&self.check);
        // Parsing is CPU work: off the runtime's threads.
        match tokio::task::spawn_blocking(move || {
            purko_analysis::check(&program, language.into(), &list)
        })
        .await
        {
            Ok(verdict) if verdict.allows() => None,
            Ok(verdict) => Some(rejected(&verdict)),
            Err(e) => {
                tracing::error!("the pre-execution check failed: {e}");
                Some(Observation::error(
                    Code::Internal,
                    "the code could not be checked, so it was not run",
                    "try again; if it fails the same way, tell the operator",
                ))
            }
        }
    }

    /// Runs the call's program. The arguments were validated against [`CodeTool::spec`]'s
    /// schema; what the sandbox cannot run is an observation, never an error.
    pub async fn run(&self, arguments: &Value, egress: &Egress) -> Observation {
        let code = arguments.get("code").and_then(Value::as_str).unwrap_or("");
        let word = arguments.get("language").and_then(Value::as_str);
        let Some(language) = word.and_then(Language::parse) else {
            return Observation::error(
                Code::ValidationFailed,
                format!("language {word:?} is not one this tool runs"),
                "call again with language set to one of the tool's enum values",
            );
        };
        let weaker = Weaker::accepted(self.config.sandbox.accept_weaker);
        let plan = match Plan::new(&self.config, language, host(), weaker) {
            Ok(plan) => {
                if let Some(weakened) = plan.weakened() {
                    tracing::warn!(
                        "running code without {weakened} (accepted in codeExecution.sandbox.acceptWeaker)"
                    );
                }
                plan
            }
            Err(e) => {
                return Observation::error(
                    Code::UpstreamUnavailable,
                    format!("the sandbox cannot run {} here: {e}", language.as_str()),
                    "use another tool; the operator can see what the machine lacks with `purko exec`",
                );
            }
        };
        if let Some(rejected) = self.check(arguments).await {
            return rejected;
        }
        let egress = (plan.network == Network::Proxied).then_some(egress);
        match purko_sandbox::run(&plan, code, egress).await {
            Ok(outcome) => outcome.observation(&plan),
            Err(e) => {
                tracing::error!("the sandbox could not run a program: {e}");
                Observation::error(
                    Code::Internal,
                    "the sandbox could not start the program",
                    "try again; if it fails the same way, tell the operator",
                )
            }
        }
    }
}

/// `CODE_REJECTED`: what the check found, each with its line, API and why.
pub fn rejected(verdict: &Verdict) -> Observation {
    let first = verdict.hits.first();
    let message = match (first, verdict.hits.len()) {
        (Some(hit), 1) => format!(
            "the code was not run: line {} uses {}, which {}",
            hit.line, hit.api, hit.why
        ),
        (Some(hit), n) => format!(
            "the code was not run: {n} refused uses, the first on line {} ({}, which {})",
            hit.line, hit.api, hit.why
        ),
        (None, _) => "the code was not run".to_owned(),
    };
    Observation::error(
        Code::CodeRejected,
        message,
        "rewrite the code without the APIs listed in hits (line, api, why) and call again; comments do not switch the check off",
    )
    .with_observation(json!({ "hits": verdict.hits }))
}
