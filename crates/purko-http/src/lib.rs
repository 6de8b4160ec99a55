#![doc = include_str!("../README.md")]

mod api;
mod egress;
mod error;

pub use api::{ApiClient, ApiRequest, ApiTool, Auth, AuthScheme, Method, Secret};
pub use egress::{Blocked, Egress, blocked_reason};
pub use error::{Error, Result};

/// Installs rustls' ring provider as the process default, once; a provider someone else
/// installed first is kept.
pub fn install_crypto() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _already_installed = rustls::crypto::ring::default_provider().install_default();
    });
}
