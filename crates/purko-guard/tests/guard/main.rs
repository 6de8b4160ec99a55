//! The integration tests of purko-guard, as one binary.
#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a broken fixture should fail the test loudly"
)]

mod corpus;
mod inference;
mod judge;
mod properties;
mod robustness;
