//! The gateway in process: an rmcp client and the gateway over `tokio::io::duplex`, an engine
//! on a real `SQLite` store, a real HTTP upstream on loopback. The end-to-end tests (the real
//! `purko` binary, the npm filesystem server, the official Python SDK) are in purko-cli's
//! `serve` tests.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a broken fixture should fail the test loudly"
)]

mod drafting;
mod http;
mod inproc;
mod notify;
mod subscriptions;
mod support;
mod upstreams;
