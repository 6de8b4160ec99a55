//! `purko serve`: loads the manifests, opens the store, and serves the API until interrupted.

use std::sync::Arc;

use purko_config::env::Environment;

use crate::{Failure, ServeArgs, start};

pub fn serve(args: &ServeArgs) -> Result<(), Failure> {
    start::logging("info", true);
    let env = Environment::from_process();
    if args.manifests.is_empty() {
        tracing::warn!("no manifests given: serving no agents; pass manifest files or folders");
    }
    let manifests = start::manifests(&args.manifests)?;
    start::runtime(start::Threads::of(args.threads))?.block_on(run(args, env, manifests))
}

async fn run(
    args: &ServeArgs,
    env: Environment,
    manifests: purko_config::Manifests,
) -> Result<(), Failure> {
    let engine = start::engine(&env, &manifests).await?;
    let (tokens, files) = purko_server::load_or_create_tokens(
        &env.home,
        env.operator_token.clone(),
        env.agent_token.clone(),
    )
    .map_err(|e| {
        Failure::new(
            format!("cannot set up the API tokens under {}: {e}", env.home.display()),
            "check that the state folder is writable, or set PURKO_OPERATOR_TOKEN and PURKO_AGENT_TOKEN",
            1,
        )
    })?;
    // Before the port opens: whoever connects first can already read how to authenticate.
    for path in &files.created {
        let token = std::fs::read_to_string(path).unwrap_or_default();
        eprintln!(
            "purko serve: made {} (mode 0600): {}",
            path.display(),
            token.trim()
        );
    }
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .map_err(|e| {
            Failure::new(
                format!("cannot listen on {}: {e}", args.listen),
                "stop the other process on that port or pass --listen 127.0.0.1:<another port>",
                1,
            )
        })?;
    let address = listener.local_addr().unwrap_or(args.listen);
    let housekeeping = engine.spawn_housekeeping();
    let agents: Vec<&str> = engine.agent_keys().collect();
    eprintln!(
        "purko serve: listening on http://{address} with {} agent(s): {}; state in {}",
        agents.len(),
        agents.join(", "),
        env.home.display()
    );
    let router = purko_server::router(Arc::clone(&engine), tokens);
    let result = purko_server::serve(listener, router, shutdown()).await;
    housekeeping.abort();
    result.map_err(|e| Failure::new(format!("the server stopped: {e}"), "see the log above", 1))
}

async fn shutdown() {
    let interrupt = tokio::signal::ctrl_c();
    let Ok(mut term) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
    else {
        let _ = interrupt.await;
        return;
    };
    tokio::select! {
        _ = interrupt => {}
        _ = term.recv() => {}
    }
}
