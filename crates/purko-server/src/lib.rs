#![doc = include_str!("../README.md")]

mod auth;
mod error;
mod routes;
mod tokens;

pub use auth::Tokens;
pub use routes::router;
pub use tokens::{TokenFiles, load_or_create_tokens};

/// Serves the router on a bound listener until `shutdown` completes.
pub async fn serve(
    listener: tokio::net::TcpListener,
    router: axum::Router,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}
