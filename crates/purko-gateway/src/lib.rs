#![doc = include_str!("../README.md")]

mod changes;
mod drafting;
mod elicit;
mod error;
mod handler;
mod http;
mod listing;
mod result;
mod stdio;

pub use drafting::{CLASSIFY_PROMPT, Drafting};
pub use error::{Error, Result};
pub use handler::{Gateway, Listing, META_IDEMPOTENCY_KEY, META_SESSION, META_STEP};
pub use http::{McpService, http_service};
pub use listing::mcp_tool;
pub use result::call_tool_result;
