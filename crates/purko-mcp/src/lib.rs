#![doc = include_str!("../README.md")]

mod call;
mod connect;
mod passthrough;
mod plain;
mod post;
mod registry;
mod spec;
mod supervisor;
mod tools;

pub use call::IDEMPOTENCY_META_KEY;
pub use passthrough::{PassError, Sees, ServerEvent};
pub use registry::{Registry, ServerState, ServerStatus};
pub use spec::{ServerSpec, Transport};
pub use tools::{McpTool, valid_tool_name};
