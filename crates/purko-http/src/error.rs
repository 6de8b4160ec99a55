//! Failures to set up outbound HTTP. Everything that goes wrong during a call becomes an
//! observation instead (see `api`), so this enum stays small.

/// Why an [`Egress`](crate::Egress) or an [`ApiClient`](crate::ApiClient) could not be built.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A `destinations.allow` pattern that cannot be read.
    #[error("destination pattern '{pattern}' cannot be used: {why}")]
    Pattern { pattern: String, why: String },
    /// The HTTP client could not be built (for example, no TLS roots).
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}

pub type Result<T> = std::result::Result<T, Error>;
