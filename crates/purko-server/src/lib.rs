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
    use axum::serve::ListenerExt;
    // Small answers go out at once: with Nagle on, a kept-alive client's delayed ACK holds
    // every second write for tens of milliseconds.
    let listener = listener.tap_io(|stream| {
        if let Err(e) = stream.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY on a connection: {e}");
        }
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(shutdown)
        .await
}
