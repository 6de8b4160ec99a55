#![doc = include_str!("../README.md")]

mod agent;
pub mod env;
mod error;
mod load;
mod locate;
mod mcp_server;
mod parse;
mod schema;
mod secret;
mod validate;

pub use agent::{
    Agent, AgentSpec, AgentType, Approvals, AuthScheme, CodeExecution, Endpoint, Guardrail,
    Language, Metadata, Method, Model, Runtime, Sandbox, SecretRef, Tool, ToolType, Webhook,
};
pub use error::{Error, Location, Result};
pub use load::{Manifests, load};
pub use mcp_server::{
    HttpTransport, McpServer, McpServerSpec, StdioTransport, Transport, TransportKind, Value,
};
pub use parse::{API_VERSION, Manifest, SUPPORTED_KINDS, parse};
pub use schema::json_schema;
