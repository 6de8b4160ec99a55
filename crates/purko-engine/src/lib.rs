#![doc = include_str!("../README.md")]

mod agent;
mod analysis;
mod approvals;
mod clock;
mod code;
mod engine;
mod error;
mod metrics;
mod observe;
mod once;
mod seal;
mod servers;

pub use agent::{AgentRuntime, Backend, MAX_OUTPUT_BYTES, McpServers, Unavailable, View};
pub use analysis::STATIC_ANALYSIS;
pub use approvals::{AskFuture, Asker, WaitingFuture};
pub use clock::now_ms;
pub use code::{CODE_TOOLS, CodeTool, rejected};
pub use engine::{CallRequest, Engine, EngineOptions};
pub use error::{Error, Result};
pub use metrics::Metrics;
pub use observe::{observe, redact};
pub use once::{arguments_digest, idempotency_key};
