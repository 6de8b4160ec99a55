//! The JSON Schema of a manifest document, for editors and CI (committed as
//! `schemas/purko.manifest.schema.json`). It is generated from the same types the loader reads,
//! so the two cannot disagree on shape; checks that span fields (an `api` tool needs an
//! endpoint) are the loader's alone.

use schemars::JsonSchema;

use crate::agent::AgentDocument;
use crate::mcp_server::McpServerDocument;

/// Any manifest document; one variant per supported kind.
#[derive(JsonSchema)]
#[serde(untagged)]
#[schemars(
    title = "Purko manifest",
    description = "One document of a Purko manifest file (apiVersion: purko.io/v1alpha1)."
)]
#[expect(dead_code, reason = "only its schema is used")]
enum Document {
    Agent(AgentDocument),
    McpServer(McpServerDocument),
}

/// The JSON Schema (draft 2020-12) of one manifest document. The kinds exclude each other
/// (each variant fixes `kind` to a constant), so the variants are listed as `oneOf`: a document
/// is exactly one kind.
pub fn json_schema() -> serde_json::Value {
    let mut schema = schemars::schema_for!(Document).to_value();
    if let Some(root) = schema.as_object_mut()
        && let Some(variants) = root.remove("anyOf")
    {
        root.insert("oneOf".into(), variants);
    }
    schema
}
