//! The tools a guard knows, loaded from an MCP `tools/list` result or a bare array.
//!
//! Tool names are unique: a second tool of the same name is an error that names both places,
//! never a silent replacement.

use std::collections::HashMap;
use std::path::Path;

use purko_protocol::ToolSpec;
use serde::Deserialize;

use crate::error::{Error, Location, Result};

/// Tools by name, in the order they were given.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    tools: Vec<ToolSpec>,
    index: HashMap<String, usize>,
}

#[derive(Deserialize)]
struct Listed {
    tools: Vec<ToolSpec>,
}

const SHAPE_HINT: &str = "give tools as an MCP tools/list result, {\"tools\": [{\"name\": ..., \"description\": ..., \"inputSchema\": {...}}]}, or as a bare array of such tools";

impl Catalogue {
    /// Builds a catalogue; a name given twice is an error.
    pub fn new(tools: Vec<ToolSpec>) -> std::result::Result<Self, String> {
        let mut index = HashMap::with_capacity(tools.len());
        for (i, tool) in tools.iter().enumerate() {
            if tool.name.trim().is_empty() {
                return Err(format!("tool number {} has an empty name", i + 1));
            }
            if let Some(first) = index.insert(tool.name.clone(), i) {
                return Err(format!(
                    "the tool name '{}' is given twice (tools number {} and {})",
                    tool.name,
                    first + 1,
                    i + 1
                ));
            }
        }
        Ok(Self { tools, index })
    }

    /// Reads a tools file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        Self::parse(&text, path)
    }

    /// Parses the text of a tools file; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let parse_error = |e: &serde_json::Error| Error::Parse {
            path: path.to_owned(),
            location: (e.line() > 0).then(|| Location {
                line: e.line(),
                column: e.column(),
            }),
            message: strip_position(&e.to_string()),
            hint: SHAPE_HINT.into(),
        };
        let tools = match text.trim_start().chars().next() {
            Some('[') => {
                serde_json::from_str::<Vec<ToolSpec>>(text).map_err(|e| parse_error(&e))?
            }
            Some('{') => {
                serde_json::from_str::<Listed>(text)
                    .map_err(|e| parse_error(&e))?
                    .tools
            }
            _ => {
                return Err(Error::Parse {
                    path: path.to_owned(),
                    location: None,
                    message: "the file holds no JSON object or array".into(),
                    hint: SHAPE_HINT.into(),
                });
            }
        };
        Self::new(tools).map_err(|message| Error::Parse {
            path: path.to_owned(),
            location: None,
            message,
            hint: "give every tool a unique, non-empty name; prefix tools of different servers as server/tool".into(),
        })
    }

    pub fn get(&self, name: &str) -> Option<&ToolSpec> {
        self.index.get(name).map(|&i| &self.tools[i])
    }

    pub fn position(&self, name: &str) -> Option<usize> {
        self.index.get(name).copied()
    }

    pub fn tools(&self) -> &[ToolSpec] {
        &self.tools
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Up to three names close to `name`, for "did you mean".
    pub fn similar(&self, name: &str) -> Vec<&str> {
        let wanted = name.to_lowercase();
        let mut scored: Vec<(usize, &str)> = self
            .tools
            .iter()
            .map(|t| (distance(&wanted, &t.name.to_lowercase()), t.name.as_str()))
            .filter(|(d, n)| *d <= (n.len().max(wanted.len()) / 3).max(2))
            .collect();
        scored.sort_unstable();
        scored.into_iter().take(3).map(|(_, n)| n).collect()
    }
}

/// `serde_json` appends " at line L column C"; the location is printed in front instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
}

/// Levenshtein distance over chars, capped at inputs of 64 chars (longer names are not
/// suggestions anyway).
fn distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().take(64).collect();
    let b: Vec<char> = b.chars().take(64).collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(text: &str) -> Result<Catalogue> {
        Catalogue::parse(text, Path::new("tools.json"))
    }

    #[test]
    fn both_shapes_load() {
        let listed =
            parse(r#"{"tools":[{"name":"a","inputSchema":{"type":"object"}}],"nextCursor":null}"#)
                .unwrap();
        let bare =
            parse(r#"[{"name":"a"},{"name":"b","http_method":"GET","marks":{"read_only":true}}]"#)
                .unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(bare.get("b").unwrap().http_method.as_deref(), Some("GET"));
        assert!(bare.get("b").unwrap().marks.read_only);
    }

    #[test]
    fn errors_say_where_and_what() {
        for (text, expected) in [
            (
                "{\"tools\": [{\"description\": \"x\"}]}",
                "tools.json:1:31: missing field `name`",
            ),
            (
                "[{\"name\": 3}]",
                "tools.json:1:11: invalid type: integer `3`, expected a string",
            ),
            ("{\"tools\": [", "tools.json:1:11: EOF while parsing a list"),
            (
                "\"hello\"",
                "tools.json: the file holds no JSON object or array",
            ),
            (
                "[{\"name\":\"a\"},{\"name\":\"a\"}]",
                "tools.json: the tool name 'a' is given twice (tools number 1 and 2)",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err().to_string(), expected);
        }
    }

    #[test]
    fn similar_names_are_suggested() {
        let catalogue =
            parse(r#"[{"name":"list_issues"},{"name":"get_issue"},{"name":"send_email"}]"#)
                .unwrap();
        assert_eq!(
            catalogue.similar("list_issue").first(),
            Some(&"list_issues")
        );
        assert!(catalogue.similar("zzz").is_empty());
    }
}
