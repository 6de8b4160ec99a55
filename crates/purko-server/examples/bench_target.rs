//! A fast local HTTP target for `scripts/bench-serve`: answers `GET /items` with a small JSON
//! list, so that the benchmark measures Purko and not the service behind it.
//!
//! Run with `cargo run --release -p purko-server --example bench_target -- 18190`.

use axum::Router;
use axum::routing::get;

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let port: u16 = std::env::args()
        .nth(1)
        .and_then(|p| p.parse().ok())
        .unwrap_or(18190);
    let app = Router::new().route(
        "/items",
        get(|| async {
            axum::Json(serde_json::json!({"items": [{"id": "apple", "price_cents": 50}, {"id": "pear", "price_cents": 70}]}))
        }),
    );
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    axum::serve(listener, app).await
}
