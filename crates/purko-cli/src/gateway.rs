//! `purko gateway --stdio`: one agent's guarded tools as an MCP server on standard input and
//! output, for a desktop client to start. Standard output is the protocol: everything else,
//! logs included, goes to standard error.

use std::sync::Arc;

use purko_config::env::Environment;
use purko_gateway::Gateway;

use crate::{Failure, GatewayArgs, start};

pub fn gateway(args: &GatewayArgs) -> Result<(), Failure> {
    start::logging("warn", false);
    if !args.stdio {
        return Err(Failure::new(
            "say which transport to serve MCP on",
            "pass --stdio; over HTTP the gateway is at /mcp/<namespace>/<name> on `purko serve`",
            2,
        ));
    }
    let env = Environment::from_process();
    let manifests = start::manifests(&args.manifests)?;
    let runtime = start::runtime(start::Threads::One)?;
    let result = runtime.block_on(run(args, env, manifests));
    // Upstream MCP servers and a call still waiting for a person must not hold the exit.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    result
}

async fn run(
    args: &GatewayArgs,
    env: Environment,
    manifests: purko_config::Manifests,
) -> Result<(), Failure> {
    let engine = start::engine(&env, &manifests).await?;
    let gateway = Gateway::new(Arc::clone(&engine), &args.agent).map_err(|e| {
        let hint = if args.manifests.is_empty() {
            "pass the manifest files or folders that define the agent".to_owned()
        } else {
            e.hint()
        };
        Failure::new(e.to_string(), hint, 1)
    })?;
    let housekeeping = engine.spawn_housekeeping();
    tracing::info!(
        agent = %args.agent,
        home = %env.home.display(),
        "purko gateway: serving MCP on standard input and output"
    );
    let result = gateway.serve_stdio().await;
    housekeeping.abort();
    result.map_err(|e| Failure::new(e.to_string(), e.hint(), 1))
}
