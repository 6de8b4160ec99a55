//! The tools a guard knows, loaded from an MCP `tools/list` result or a bare array.
//!
//! Tool names are unique: a second tool of the same name is an error that names both places,
//! never a silent replacement.

use std::path::Path;
use std::sync::OnceLock;

use purko_protocol::ToolSpec;
use rustc_hash::FxHashMap;
use serde::de;

use crate::error::{Error, Location, Result};

/// Tools by name, in the order they were given.
#[derive(Clone, Debug, Default)]
pub struct Catalogue {
    tools: Vec<ToolSpec>,
    index: FxHashMap<String, usize>,
    /// Lower-case names, cut to [`SUGGEST_LEN`] chars, made on the first suggestion.
    folded: OnceLock<Vec<Folded>>,
}

/// A name as suggestions compare it: its chars, and how often each letter, digit or other
/// char occurs (the "bag" that bounds the edit distance from below, cheaply).
#[derive(Clone, Debug)]
struct Folded {
    chars: Vec<char>,
    bag: [u8; 38],
}

impl Folded {
    fn new(name: &str) -> Self {
        let chars = fold_name(name);
        let mut bag = [0u8; 38];
        for c in &chars {
            let slot = match c {
                'a'..='z' => *c as usize - 'a' as usize,
                '0'..='9' => 26 + (*c as usize - '0' as usize),
                _ => 36 + usize::from(*c != '_'),
            };
            bag[slot] = bag[slot].saturating_add(1);
        }
        Self { chars, bag }
    }

    /// A lower bound of the edit distance: chars one has and the other lacks.
    fn bag_distance(&self, other: &Folded) -> usize {
        let (mut more, mut fewer) = (0usize, 0usize);
        for (a, b) in self.bag.iter().zip(&other.bag) {
            more += usize::from(a.saturating_sub(*b));
            fewer += usize::from(b.saturating_sub(*a));
        }
        more.max(fewer)
    }
}

/// Names are compared for suggestions on their first chars only.
const SUGGEST_LEN: usize = 64;

fn fold_name(name: &str) -> Vec<char> {
    name.chars()
        .flat_map(char::to_lowercase)
        .take(SUGGEST_LEN)
        .collect()
}

const SHAPE_HINT: &str = "give tools as an MCP tools/list result, {\"tools\": [{\"name\": ..., \"description\": ..., \"inputSchema\": {...}}]}, or as a bare array of such tools";
const NAME_HINT: &str =
    "give every tool a unique, non-empty name; prefix tools of different servers as server/tool";

/// Tool names seen so far, by their number from 1.
#[derive(Default)]
struct Names(FxHashMap<String, usize>);

impl Names {
    fn add(&mut self, name: &str) -> std::result::Result<usize, String> {
        let number = self.0.len() + 1;
        if name.trim().is_empty() {
            return Err(format!("tool number {number} has an empty name"));
        }
        if let Some(first) = self.0.get(name) {
            return Err(format!(
                "the tool name '{name}' is given twice (tools number {first} and {number})"
            ));
        }
        self.0.insert(name.to_owned(), number);
        Ok(number)
    }
}

impl Catalogue {
    /// Builds a catalogue; an empty name or a name given twice is an error.
    pub fn new(tools: Vec<ToolSpec>) -> std::result::Result<Self, String> {
        let mut names = Names::default();
        for tool in &tools {
            names.add(&tool.name)?;
        }
        let index = names
            .0
            .into_iter()
            .map(|(name, number)| (name, number - 1))
            .collect();
        Ok(Self {
            tools,
            index,
            folded: OnceLock::new(),
        })
    }

    /// Reads a tools file.
    pub fn load(path: &Path) -> Result<Self> {
        let text = read(path)?;
        Self::parse(&text, path)
    }

    /// Parses the text of a tools file; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let mut tools = Vec::new();
        let mut index = FxHashMap::default();
        each_tool(text, path, |tool| {
            index.insert(tool.name.clone(), tools.len());
            tools.push(tool);
        })?;
        Ok(Self {
            tools,
            index,
            folded: OnceLock::new(),
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

    /// Up to three names close to `name`, for "did you mean". Names whose length alone puts
    /// them out of reach are skipped, and each distance stops once it is out of reach, so an
    /// unknown name costs little even against thousands of tools.
    pub fn similar(&self, name: &str) -> Vec<&str> {
        let wanted = Folded::new(name);
        let folded = self
            .folded
            .get_or_init(|| self.tools.iter().map(|t| Folded::new(&t.name)).collect());
        let mut row = Vec::with_capacity(SUGGEST_LEN + 1);
        let mut scored: Vec<(usize, usize)> = Vec::new();
        for (i, candidate) in folded.iter().enumerate() {
            let (a, b) = (&wanted.chars, &candidate.chars);
            let reach = (a.len().max(b.len()) / 3).max(2);
            if a.len().abs_diff(b.len()) > reach || wanted.bag_distance(candidate) > reach {
                continue;
            }
            if let Some(d) = bounded_distance(a, b, reach, &mut row) {
                scored.push((d, i));
            }
        }
        scored.sort_unstable_by_key(|&(d, i)| (d, &self.tools[i].name));
        scored
            .into_iter()
            .take(3)
            .map(|(_, i)| self.tools[i].name.as_str())
            .collect()
    }
}

/// Levenshtein distance between `a` and `b` when it is at most `reach`; `None` as soon as every
/// cell of a row is beyond it. `row` is scratch space, reused between calls.
fn bounded_distance(a: &[char], b: &[char], reach: usize, row: &mut Vec<usize>) -> Option<usize> {
    row.clear();
    row.extend(0..=b.len());
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        let mut best = row[0];
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + usize::from(ca != cb));
            diagonal = above;
            best = best.min(row[j + 1]);
        }
        if best > reach {
            return None;
        }
    }
    let d = row[b.len()];
    (d <= reach).then_some(d)
}

/// Reads a file as text, naming it in the error.
pub(crate) fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Read {
        path: path.to_owned(),
        source,
    })
}

/// Hands the tools of a tools file to `each`, one at a time and in order, without holding them
/// all: the kinds of a catalogue of any size are drafted with one tool in memory at a time.
/// A name that is empty or given twice stops the reading with an error naming both tools.
pub fn each_tool(text: &str, path: &Path, each: impl FnMut(ToolSpec)) -> Result<()> {
    let parse_error = |e: &serde_json::Error| {
        let message = strip_position(&e.to_string());
        let about_names = message.contains("given twice") || message.contains("empty name");
        Error::Parse {
            path: path.to_owned(),
            location: (e.line() > 0 && !about_names).then(|| Location {
                line: e.line(),
                column: e.column(),
            }),
            message,
            hint: if about_names { NAME_HINT } else { SHAPE_HINT }.into(),
        }
    };
    let mut de = serde_json::Deserializer::from_str(text);
    let shape = match text.trim_start().chars().next() {
        Some('[') => de::Deserializer::deserialize_seq(&mut de, ToolList(each)),
        Some('{') => de::Deserializer::deserialize_map(&mut de, Listed(ToolList(each))),
        _ => {
            return Err(Error::Parse {
                path: path.to_owned(),
                location: None,
                message: "the file holds no JSON object or array".into(),
                hint: SHAPE_HINT.into(),
            });
        }
    };
    shape.and_then(|()| de.end()).map_err(|e| parse_error(&e))
}

/// Visits `[tool, ...]`, handing each tool on.
struct ToolList<F>(F);

impl<'de, F: FnMut(ToolSpec)> de::Visitor<'de> for ToolList<F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of tools")
    }

    fn visit_seq<A: de::SeqAccess<'de>>(mut self, mut seq: A) -> std::result::Result<(), A::Error> {
        let mut names = Names::default();
        while let Some(tool) = seq.next_element::<ToolSpec>()? {
            names.add(&tool.name).map_err(de::Error::custom)?;
            (self.0)(tool);
        }
        Ok(())
    }
}

impl<'de, F: FnMut(ToolSpec)> de::DeserializeSeed<'de> for ToolList<F> {
    type Value = ();

    fn deserialize<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> std::result::Result<(), D::Error> {
        deserializer.deserialize_seq(self)
    }
}

/// Visits `{"tools": [...], ...}`, the MCP `tools/list` result; other keys are skipped.
struct Listed<F>(ToolList<F>);

impl<'de, F: FnMut(ToolSpec)> de::Visitor<'de> for Listed<F> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an object with a tools array")
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> std::result::Result<(), A::Error> {
        let mut list = Some(self.0);
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            match (key.as_ref(), list.take()) {
                ("tools", Some(tools)) => map.next_value_seed(tools)?,
                ("tools", None) => return Err(de::Error::duplicate_field("tools")),
                (_, kept) => {
                    list = kept;
                    map.next_value::<de::IgnoredAny>()?;
                }
            }
        }
        match list {
            Some(_) => Err(de::Error::missing_field("tools")),
            None => Ok(()),
        }
    }
}

/// `serde_json` appends " at line L column C"; the location is printed in front instead.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(at) => message[..at].to_owned(),
        None => message.to_owned(),
    }
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
            (
                "{\"nextCursor\": null}",
                "tools.json:1:20: missing field `tools`",
            ),
            ("[] []", "tools.json:1:4: trailing characters"),
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
