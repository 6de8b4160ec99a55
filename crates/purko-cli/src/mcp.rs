//! `purko mcp`: the drafting server of seed 001 on standard input and output. It drafts one
//! agent's `tool_kinds.yaml`, records an assistant's proposals, explains decisions, and never
//! calls a model. Standard output is the protocol: logs go to standard error.

use std::sync::Arc;

use purko_config::env::Environment;
use purko_config::{Agent, Manifests};
use purko_gateway::Drafting;

use crate::{Failure, McpArgs, start};

pub fn mcp(args: &McpArgs) -> Result<(), Failure> {
    start::logging("warn", false);
    let env = Environment::from_process();
    let manifests = start::manifests(&args.manifests)?;
    let agent = choose_agent(&manifests, args.agent.as_deref())?.clone();
    let workdir = std::env::current_dir().map_err(|e| {
        Failure::new(
            format!("cannot tell the working folder: {e}"),
            "run purko mcp from a folder that exists",
            1,
        )
    })?;
    let runtime = start::runtime(start::Threads::One)?;
    let result = runtime.block_on(run(env, &manifests, &agent, workdir));
    // Upstream MCP servers must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    result
}

/// The agent to draft for: the one named, or the only one. Anything else is a usage error.
fn choose_agent<'a>(manifests: &'a Manifests, named: Option<&str>) -> Result<&'a Agent, Failure> {
    let known = || {
        manifests
            .agents
            .iter()
            .map(Agent::key)
            .collect::<Vec<_>>()
            .join(", ")
    };
    match (named, manifests.agents.as_slice()) {
        (Some(key), _) => manifests.agent(key).ok_or_else(|| {
            let known = if manifests.agents.is_empty() {
                "none".to_owned()
            } else {
                known()
            };
            Failure::new(
                format!("no agent named '{key}' in the manifests; known agents: {known}"),
                "pass --agent as namespace/name, as the agent's manifest's metadata says, and the manifest files that define it",
                2,
            )
        }),
        (None, [only]) => Ok(only),
        (None, []) => Err(Failure::new(
            "no agent to draft for: the manifests define none",
            "pass the manifest files or folders that define the agent (kind: Agent)",
            2,
        )),
        (None, _) => Err(Failure::new(
            format!(
                "the manifests define several agents ({}); say which one to draft for",
                known()
            ),
            "pass --agent <namespace>/<name>",
            2,
        )),
    }
}

async fn run(
    env: Environment,
    manifests: &Manifests,
    agent: &Agent,
    workdir: std::path::PathBuf,
) -> Result<(), Failure> {
    let engine = start::engine(&env, &Drafting::engine_manifests(manifests)).await?;
    let drafting = Drafting::new(Arc::clone(&engine), agent, workdir)
        .map_err(|e| Failure::new(e.to_string(), e.hint(), 1))?;
    tracing::info!(
        agent = %drafting.agent(),
        home = %env.home.display(),
        "purko mcp: serving the drafting server on standard input and output"
    );
    drafting
        .serve_stdio()
        .await
        .map_err(|e| Failure::new(e.to_string(), e.hint(), 1))
}
