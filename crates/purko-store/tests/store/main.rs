//! The store's behaviour on real `SQLite` files in temporary folders.

mod approvals;
mod decisions;
mod idempotency;
mod open;
mod support;
