//! The pipeline end to end, against a real `SQLite` file and a real HTTP service on loopback.

mod approvals;
mod calls;
mod code;
mod codes;
mod idempotency;
mod support;
