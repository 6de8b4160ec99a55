//! The tools a registry exposes: what is kept from each server's `tools/list`, and the names
//! agents see.
//!
//! Invariants: every kept tool has a name within MCP's rules (1 to 128 characters of
//! `A-Z a-z 0-9 _ - .`) and an object `inputSchema`; anything else is dropped with a warning,
//! never fatal. An upstream name listed by two or more servers is exposed as `server/tool` for
//! every one of them, so no exposed name depends on which server answered first.

use std::collections::{BTreeMap, HashMap};

use purko_protocol::{Marks, ToolAnnotations, ToolSpec};
use serde_json::Value;

/// One tool as agents see it.
#[derive(Clone, Debug, PartialEq)]
pub struct McpTool {
    /// The name agents call: the upstream name, or `server/tool` when it collides.
    pub exposed: String,
    /// The server's registered name.
    pub server: String,
    /// The name on the server.
    pub upstream: String,
    /// As listed (`name` is `exposed`), with the catalogue's trusted marks.
    pub spec: ToolSpec,
}

/// What one server's list left after checking.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Accepted {
    /// Upstream order; `name` is the upstream name.
    pub tools: Vec<ToolSpec>,
    /// One sentence per dropped tool or ignored field.
    pub warnings: Vec<String>,
}

/// Whether `name` follows MCP's tool-name rules (2025-11-25 revision, "Tool names"): 1 to 128
/// characters, ASCII letters, digits, `_`, `-` and `.`.
pub fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
}

/// Checks each listed tool (raw JSON, so that one bad entry cannot spoil the others).
pub(crate) fn accept(raw: &[Value], catalogue: &BTreeMap<String, Marks>) -> Accepted {
    let mut out = Accepted::default();
    for (index, tool) in raw.iter().enumerate() {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            out.warnings
                .push(format!("tool #{index} was dropped: it has no name"));
            continue;
        };
        if !valid_tool_name(name) {
            out.warnings.push(format!(
                "tool '{}' was dropped: a tool name must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'",
                shorten(name)
            ));
            continue;
        }
        if out.tools.iter().any(|t| t.name == name) {
            out.warnings.push(format!(
                "tool '{name}' was dropped: the server lists that name twice"
            ));
            continue;
        }
        let schema = tool.get("inputSchema");
        let is_object_schema = schema
            .and_then(Value::as_object)
            .is_some_and(|s| s.get("type").and_then(Value::as_str) == Some("object"));
        if !is_object_schema {
            out.warnings.push(format!(
                "tool '{name}' was dropped: its inputSchema is not a JSON Schema of type \"object\""
            ));
            continue;
        }
        let annotations = match tool.get("annotations") {
            None | Some(Value::Null) => None,
            Some(a) => {
                let read = serde_json::from_value::<ToolAnnotations>(a.clone()).ok();
                if read.is_none() {
                    out.warnings.push(format!(
                        "tool '{name}': its annotations cannot be read and are ignored"
                    ));
                }
                read
            }
        };
        let mut spec = ToolSpec::new(
            name,
            tool.get("description")
                .and_then(Value::as_str)
                .unwrap_or_default(),
        );
        spec.input_schema = schema.cloned();
        spec.annotations = annotations;
        spec.marks = catalogue.get(name).copied().unwrap_or_default();
        out.tools.push(spec);
    }
    for name in catalogue.keys() {
        if !out.tools.iter().any(|t| &t.name == name) {
            out.warnings.push(format!(
                "the catalogue marks tool '{name}', which the server does not list"
            ));
        }
    }
    out
}

/// The union of every server's tools, in server order then upstream order.
pub(crate) fn union<'a>(
    servers: impl IntoIterator<Item = (&'a str, &'a [ToolSpec])>,
) -> Vec<McpTool> {
    let servers: Vec<(&str, &[ToolSpec])> = servers.into_iter().collect();
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, tools) in &servers {
        for tool in *tools {
            *count.entry(tool.name.as_str()).or_default() += 1;
        }
    }
    let mut out = Vec::new();
    for (server, tools) in servers {
        for tool in tools {
            let exposed = if count[tool.name.as_str()] > 1 {
                format!("{server}/{}", tool.name)
            } else {
                tool.name.clone()
            };
            let mut spec = tool.clone();
            spec.name.clone_from(&exposed);
            out.push(McpTool {
                exposed,
                server: server.to_owned(),
                upstream: tool.name.clone(),
                spec,
            });
        }
    }
    out
}

/// Up to three known names closest to `wanted`, nearest first.
pub(crate) fn closest<'a>(wanted: &str, known: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut scored: Vec<(usize, &str)> = known
        .into_iter()
        .map(|k| (distance(wanted, k), k))
        .filter(|(d, k)| *d <= k.len().max(wanted.len()) / 2 + 1)
        .collect();
    scored.sort_unstable();
    scored.into_iter().take(3).map(|(_, k)| k).collect()
}

fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (diagonal + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(row[j + 1] + 1);
            diagonal = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

/// A name cut for a message: an upstream can send anything.
fn shorten(name: &str) -> String {
    let cut: String = name.chars().take(64).collect();
    let cut = cut.escape_debug().to_string();
    if name.chars().count() > 64 {
        format!("{cut}…")
    } else {
        cut
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn obj() -> Value {
        json!({"type": "object", "properties": {}})
    }

    #[test]
    fn names_follow_the_rules() {
        for ok in [
            "a",
            "read_file",
            "get-env",
            "admin.tools.list",
            &"x".repeat(128),
        ] {
            assert!(valid_tool_name(ok), "{ok}");
        }
        for bad in ["", "a b", "a/b", "a,b", "é", &"x".repeat(129), "a\n"] {
            assert!(!valid_tool_name(bad), "{bad}");
        }
    }

    #[test]
    fn bad_tools_are_dropped_with_a_warning_and_the_rest_kept() {
        let raw = vec![
            json!({"name": "good", "description": "d", "inputSchema": obj(),
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "has space", "inputSchema": obj()}),
            json!({"name": "no_schema"}),
            json!({"name": "string_schema", "inputSchema": {"type": "string"}}),
            json!({"inputSchema": obj()}),
            json!({"name": "good", "inputSchema": obj()}),
            json!({"name": "odd_annotations", "inputSchema": obj(), "annotations": {"readOnlyHint": "yes"}}),
        ];
        let mut catalogue = BTreeMap::new();
        catalogue.insert(
            "good".to_owned(),
            Marks {
                read_only: true,
                ..Marks::default()
            },
        );
        catalogue.insert("ghost".to_owned(), Marks::default());
        let got = accept(&raw, &catalogue);
        let names: Vec<&str> = got.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, vec!["good", "odd_annotations"]);
        assert!(got.tools[0].marks.read_only);
        assert_eq!(
            got.tools[0]
                .annotations
                .as_ref()
                .and_then(|a| a.read_only_hint),
            Some(true)
        );
        assert_eq!(got.tools[1].annotations, None);
        assert_eq!(
            got.warnings,
            vec![
                "tool 'has space' was dropped: a tool name must be 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'",
                "tool 'no_schema' was dropped: its inputSchema is not a JSON Schema of type \"object\"",
                "tool 'string_schema' was dropped: its inputSchema is not a JSON Schema of type \"object\"",
                "tool #4 was dropped: it has no name",
                "tool 'good' was dropped: the server lists that name twice",
                "tool 'odd_annotations': its annotations cannot be read and are ignored",
                "the catalogue marks tool 'ghost', which the server does not list",
            ]
        );
    }

    #[test]
    fn colliding_names_are_prefixed_on_every_server() {
        let a = vec![ToolSpec::new("read", ""), ToolSpec::new("only_a", "")];
        let b = vec![ToolSpec::new("read", "")];
        let got = union([("a", a.as_slice()), ("b", b.as_slice())]);
        let exposed: Vec<(&str, &str, &str)> = got
            .iter()
            .map(|t| (t.exposed.as_str(), t.server.as_str(), t.upstream.as_str()))
            .collect();
        assert_eq!(
            exposed,
            vec![
                ("a/read", "a", "read"),
                ("only_a", "a", "only_a"),
                ("b/read", "b", "read")
            ]
        );
        assert_eq!(got[0].spec.name, "a/read");
    }

    #[test]
    fn closest_names_come_first() {
        let known = ["echo", "get-env", "get-sum", "read_text_file"];
        assert_eq!(closest("ecoh", known), vec!["echo"]);
        assert_eq!(closest("get-su", known)[0], "get-sum");
        assert!(closest("zzzzzzzzzzzz", known).is_empty());
    }
}
