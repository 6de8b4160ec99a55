//! The JSON Schema of a manifest document, for editors and CI (committed as
//! `schemas/purko.manifest.schema.json`). It is generated from the same types the loader reads,
//! so the two cannot disagree on shape; checks that span fields (an `api` tool needs an
//! endpoint) are the loader's alone.

use schemars::JsonSchema;

use crate::agent::AgentDocument;

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
}

/// The JSON Schema (draft 2020-12) of one manifest document.
pub fn json_schema() -> serde_json::Value {
    schemars::schema_for!(Document).to_value()
}
