//! The engine's tool views as MCP tools. The annotations are derived from the kind Purko
//! judged, never copied from an upstream: a client that trusts `readOnlyHint` trusts Purko.

use std::sync::Arc;

use purko_protocol::Kind;
use rmcp::model::{JsonObject, MetaObject, Tool, ToolAnnotations};
use serde_json::Value;

/// One tool view of `Engine::tools` as an MCP tool; `None` for a view without a name.
pub fn mcp_tool(view: &Value) -> Option<Tool> {
    let name = view.get("name")?.as_str()?.to_owned();
    let description = view
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let schema = match view.get("inputSchema") {
        Some(Value::Object(schema)) => schema.clone(),
        _ => empty_object_schema(),
    };
    let mut tool = Tool::new(name, description, Arc::new(schema));
    let kind = view
        .get("kind")
        .and_then(|k| serde_json::from_value::<Kind>(k.clone()).ok());
    tool.annotations = kind.map(annotations);
    let mut meta = MetaObject::new();
    for (key, field) in [
        ("purko.io/kind", "kind"),
        ("purko.io/kind_source", "kind_source"),
        ("purko.io/kind_reason", "kind_reason"),
    ] {
        if let Some(value) = view.get(field).filter(|v| !v.is_null()) {
            meta.insert(key.to_owned(), value.clone());
        }
    }
    if !meta.is_empty() {
        tool.meta = Some(meta);
    }
    Some(tool)
}

/// The hints a kind gives. A write is destructive because Purko cannot know it is only
/// additive; a `sends_out` tool reaches the open world.
fn annotations(kind: Kind) -> ToolAnnotations {
    match kind {
        Kind::Read => ToolAnnotations::new().read_only(true),
        Kind::Write => ToolAnnotations::new().read_only(false).destructive(true),
        Kind::SendsOut => ToolAnnotations::new().read_only(false).open_world(true),
    }
}

fn empty_object_schema() -> JsonObject {
    let mut schema = JsonObject::new();
    schema.insert("type".into(), Value::String("object".into()));
    schema
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use serde_json::json;

    use super::*;

    #[test]
    fn each_kind_gets_its_hints_and_the_name_is_kept() {
        let view = |kind: &str| {
            json!({"name": "files/write_file", "description": "d", "inputSchema": null,
                   "kind": kind, "kind_source": "catalogue", "kind_reason": "r"})
        };
        let wire = |kind: &str| {
            serde_json::to_value(mcp_tool(&view(kind)).expect("a tool")).expect("serialises")
        };
        let read = wire("read");
        assert_eq!(read["name"], "files/write_file");
        assert_eq!(read["annotations"], json!({"readOnlyHint": true}));
        assert_eq!(read["inputSchema"], json!({"type": "object"}));
        assert_eq!(read["_meta"]["purko.io/kind_source"], "catalogue");
        assert_eq!(
            wire("write")["annotations"],
            json!({"readOnlyHint": false, "destructiveHint": true})
        );
        assert_eq!(
            wire("sends_out")["annotations"],
            json!({"readOnlyHint": false, "openWorldHint": true})
        );
    }
}
