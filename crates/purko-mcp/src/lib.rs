#![doc = include_str!("../README.md")]

mod call;
mod connect;
mod registry;
mod spec;
mod supervisor;
mod tools;

pub use call::IDEMPOTENCY_META_KEY;
pub use registry::{Registry, ServerState, ServerStatus};
pub use spec::{ServerSpec, Transport};
pub use tools::{McpTool, valid_tool_name};

/// Installs rustls' ring provider as the process default once, before any HTTP client is
/// built; a provider installed earlier is kept.
fn install_crypto() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
    });
}
