//! Tools as a catalogue describes them, and calls of them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool an agent may call: the MCP `tools/list` shape, plus the HTTP method of an API
/// operation and the trusted catalogue marks of DESIGN.md section 3.
///
/// Fields a catalogue carries that Purko does not read (`title`, `outputSchema`, `_meta`) are
/// accepted and ignored, so a real `tools/list` result loads as it is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSpec {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// The JSON Schema of the arguments; `None` when the catalogue gave none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// `GET`, `POST`, ... for an HTTP operation.
    #[serde(
        default,
        rename = "http_method",
        alias = "httpMethod",
        skip_serializing_if = "Option::is_none"
    )]
    pub http_method: Option<String>,
    #[serde(default, skip_serializing_if = "Marks::is_empty")]
    pub marks: Marks,
}

impl ToolSpec {
    /// A tool with a name and a description and nothing else.
    pub fn new(name: impl Into<String>, description: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            input_schema: None,
            annotations: None,
            http_method: None,
            marks: Marks::default(),
        }
    }
}

/// The MCP tool annotations Purko reads. They are hints from the server, not promises: one more
/// signal for inference, never a trusted mark.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// Trusted declarations of what a tool does: the builtin and function tools' own definitions,
/// an API tool's `kind:`, an `MCPServer` manifest's `catalogue:` section.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Marks {
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub read_only: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub destructive: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub egress: bool,
}

impl Marks {
    pub fn is_empty(&self) -> bool {
        !(self.read_only || self.destructive || self.egress)
    }
}

/// One call of a tool, as a model asked for it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    /// Should be an object; anything else is judged and refused, not rejected on parse.
    #[serde(default = "empty_object")]
    pub arguments: Value,
}

impl ToolCall {
    pub fn new(name: impl Into<String>, arguments: Value) -> Self {
        Self {
            name: name.into(),
            arguments,
        }
    }
}

fn empty_object() -> Value {
    Value::Object(serde_json::Map::new())
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn an_mcp_tool_loads_with_fields_purko_does_not_read() {
        let tool: ToolSpec = serde_json::from_value(json!({
            "name": "read_file",
            "title": "Read file",
            "description": "Read a file",
            "inputSchema": {"type": "object"},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true, "title": "Read"},
            "_meta": {"x": 1}
        }))
        .unwrap();
        assert_eq!(tool.annotations.unwrap().read_only_hint, Some(true));
        assert_eq!(tool.input_schema, Some(json!({"type": "object"})));
    }

    #[test]
    fn an_unknown_mark_is_an_error() {
        let err = serde_json::from_value::<ToolSpec>(json!({
            "name": "x", "marks": {"readonly": true}
        }))
        .unwrap_err();
        assert!(
            err.to_string().contains("unknown field `readonly`"),
            "{err}"
        );
    }

    #[test]
    fn a_call_without_arguments_has_an_empty_object() {
        let call: ToolCall = serde_json::from_str(r#"{"name":"x"}"#).unwrap();
        assert_eq!(call.arguments, json!({}));
    }
}
