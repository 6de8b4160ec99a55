#![doc = include_str!("../README.md")]

mod error;
mod liveness;
mod model;
mod sqlite;
mod store;

pub use error::{Error, Result};
pub use liveness::HEARTBEAT_TIMEOUT_MS;
pub use model::{
    Answer, ApprovalFilter, CallKey, Claim, ClaimRequest, DEFAULT_LIMIT, Decided, DecisionFilter,
    DecisionRecord, Grant, IdempotencyRecord, Outcome, ProcessIdentity, RecordState, RunId,
};
pub use sqlite::{OpenOptions, SCHEMA_VERSION, SqliteStore, database_path};
pub use store::Store;
