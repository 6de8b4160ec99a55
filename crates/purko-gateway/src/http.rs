//! The gateway over streamable HTTP, as a tower service `purko serve` mounts per agent. It
//! keeps rmcp's `Host` check (loopback names only) against DNS rebinding; the bearer token is
//! checked by the router in front of it.

use std::sync::Arc;

use purko_engine::Engine;
use rmcp::transport::StreamableHttpServerConfig;
use rmcp::transport::StreamableHttpService;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::error::Result;
use crate::handler::{Gateway, Listing};

/// The streamable HTTP service of one agent's gateway.
pub type McpService = StreamableHttpService<Gateway, LocalSessionManager>;

/// A streamable HTTP service for `agent`; each MCP session gets its own [`Gateway`] (its own
/// step counter). An unknown agent is an error here.
pub fn http_service(engine: Arc<Engine>, agent: &str) -> Result<McpService> {
    Gateway::new(Arc::clone(&engine), agent)?;
    let agent = agent.to_owned();
    let listing = Arc::new(Listing::default());
    Ok(StreamableHttpService::new(
        move || {
            Gateway::new(Arc::clone(&engine), &agent)
                .map(|g| g.with_listing(Arc::clone(&listing)))
                .map_err(|e| std::io::Error::new(std::io::ErrorKind::NotFound, e.to_string()))
        },
        Arc::new(LocalSessionManager::default()),
        config(),
    ))
}

/// rmcp's defaults (loopback `Host` names only, sessions for clients on revisions before
/// 2026-07-28), but a plain JSON answer where a call sends nothing before its result: no event
/// stream to open and frame for every call. A call that does send something first (an
/// elicitation on an older revision) still gets an event stream.
fn config() -> StreamableHttpServerConfig {
    let mut config = StreamableHttpServerConfig::default();
    config.json_response = true;
    config
}
