//! `tool_kinds.yaml`: the file where a person says what each tool is (DESIGN.md section 3).
//!
//! Loading is strict: bad YAML, an unknown key, an unknown kind or source is an error naming
//! the file, line and column. Writing is canonical: a file written by [`KindsFile::to_yaml`]
//! loads back to the same value and writes back to the same bytes. Uncertain entries are
//! written first under a heading, so a person reads them before the rest; entries an assistant
//! proposed (`source: assistant`) come next under their own heading, apart from the person's.

use std::path::{Path, PathBuf};

use indexmap::IndexMap;
use purko_protocol::{Kind, KindSource};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{Error, Location, Result};

/// One tool's entry.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KindEntry {
    pub kind: Kind,
    #[serde(default = "person")]
    pub source: KindSource,
    #[serde(default)]
    pub reason: String,
}

fn person() -> KindSource {
    KindSource::You
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawKindsFile {
    #[serde(default = "yes")]
    infer: bool,
    #[serde(default)]
    tools: UniqueMap<KindEntry>,
}

/// A mapping that refuses a key given twice (YAML parsers keep the last one silently).
struct UniqueMap<V>(IndexMap<String, V>);

impl<V> Default for UniqueMap<V> {
    fn default() -> Self {
        Self(IndexMap::new())
    }
}

impl<'de, V: Deserialize<'de>> Deserialize<'de> for UniqueMap<V> {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        struct Visit<V>(std::marker::PhantomData<V>);
        impl<'de, V: Deserialize<'de>> serde::de::Visitor<'de> for Visit<V> {
            type Value = UniqueMap<V>;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a mapping from tool names to entries")
            }

            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> std::result::Result<Self::Value, A::Error> {
                let mut map = IndexMap::new();
                while let Some(key) = access.next_key::<String>()? {
                    if map.contains_key(&key) {
                        return Err(serde::de::Error::custom(format!(
                            "duplicate entry: the tool '{key}' is named twice"
                        )));
                    }
                    let value = access.next_value()?;
                    map.insert(key, value);
                }
                Ok(UniqueMap(map))
            }
        }
        deserializer.deserialize_map(Visit(std::marker::PhantomData))
    }
}

fn yes() -> bool {
    true
}

/// A loaded or drafted `tool_kinds.yaml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KindsFile {
    /// Whether inference decides the tools this file does not name.
    pub infer: bool,
    pub tools: IndexMap<String, KindEntry>,
    /// Hex SHA-256 of the bytes it was loaded from.
    digest: Option<String>,
}

/// In which order a drafted file lists its entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Group {
    Unsure,
    Conflicted,
    /// Proposed by an assistant through `set_tool_kinds`: kept apart for a person to check.
    Assistant,
    Rest,
}

/// Reasons of entries whose signals disagreed start so (see `infer`).
pub const CONFLICT_PREFIX: &str = "signals disagree";

fn group(entry: &KindEntry) -> Group {
    match entry.source {
        KindSource::Unsure => Group::Unsure,
        KindSource::Annotation | KindSource::Inferred
            if entry.reason.starts_with(CONFLICT_PREFIX) =>
        {
            Group::Conflicted
        }
        KindSource::Assistant => Group::Assistant,
        _ => Group::Rest,
    }
}

const HEADER: &str = "\
# tool_kinds.yaml: what each tool does, for Purko's guardrail.
# kind: read | write | sends_out
# source: you | assistant | catalogue | annotation | inferred | unsure
# A tool named here is always of the kind written here. Uncertain tools come first:
# check them, fix the kind where it is wrong, and set source: you on what you have checked.
";

impl KindsFile {
    /// An empty file: inference on or off, no entries.
    pub fn new(infer: bool) -> Self {
        Self {
            infer,
            tools: IndexMap::new(),
            digest: None,
        }
    }

    /// Reads and parses a file.
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).map_err(|source| Error::Read {
            path: path.to_owned(),
            source,
        })?;
        let text = String::from_utf8(bytes).map_err(|e| Error::Parse {
            path: path.to_owned(),
            location: None,
            message: format!(
                "the file is not UTF-8 text (byte {} is not)",
                e.utf8_error().valid_up_to()
            ),
            hint: "save tool_kinds.yaml as UTF-8".into(),
        })?;
        Self::parse(&text, path)
    }

    /// Parses the text of a file; `path` names it in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        let digest = hex(&Sha256::digest(text.as_bytes()));
        let raw: RawKindsFile = if text
            .lines()
            .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
        {
            RawKindsFile {
                infer: true,
                tools: UniqueMap::default(),
            }
        } else {
            yaml_serde::from_str(text).map_err(|e| yaml_error(path, &e))?
        };
        let tools = raw.tools.0;
        if let Some(name) = tools.keys().find(|n| n.trim().is_empty()) {
            return Err(Error::Parse {
                path: path.to_owned(),
                location: None,
                message: format!("the tool name {name:?} is empty"),
                hint: "name each tool under tools: exactly as the catalogue spells it".into(),
            });
        }
        Ok(Self {
            infer: raw.infer,
            tools,
            digest: Some(digest),
        })
    }

    /// Hex SHA-256 of the loaded bytes; `None` for a file that was drafted, not loaded.
    pub fn digest(&self) -> Option<&str> {
        self.digest.as_deref()
    }

    /// Puts entries in drafting order: the uncertain ones first, then those whose signals
    /// disagreed, then those an assistant proposed, then the rest; by name within each group.
    pub fn sort_for_review(&mut self) {
        self.tools
            .sort_by(|a_name, a, b_name, b| (group(a), a_name).cmp(&(group(b), b_name)));
    }

    /// The canonical YAML text.
    pub fn to_yaml(&self) -> String {
        let mut out = String::with_capacity(HEADER.len() + self.tools.len() * 96);
        out.push_str(HEADER);
        out.push_str(if self.infer {
            "infer: true\n"
        } else {
            "infer: false\n"
        });
        if self.tools.is_empty() {
            out.push_str("tools: {}\n");
            return out;
        }
        out.push_str("tools:\n");
        let mut last = None;
        for (name, entry) in &self.tools {
            let group = group(entry);
            if last != Some(group) {
                let heading = match group {
                    Group::Unsure => {
                        Some("# Uncertain: nothing told what these do. Check them first.")
                    }
                    Group::Conflicted => Some("# Signals disagreed on these: check them next."),
                    Group::Assistant => Some(
                        "# Proposed by an assistant (set_tool_kinds): check these, and set source: you on what you keep.",
                    ),
                    Group::Rest if last.is_some() => Some("# The rest."),
                    Group::Rest => None,
                };
                if let Some(heading) = heading {
                    out.push_str("  ");
                    out.push_str(heading);
                    out.push('\n');
                }
                last = Some(group);
            }
            out.push_str("  ");
            out.push_str(&yaml_key(name));
            out.push_str(":\n    kind: ");
            out.push_str(entry.kind.as_str());
            out.push_str("\n    source: ");
            out.push_str(entry.source.as_str());
            out.push_str("\n    reason: ");
            out.push_str(&serde_json::Value::String(entry.reason.clone()).to_string());
            out.push('\n');
        }
        out
    }

    /// The JSON form, in the file's order: `{"infer": true, "tools": {"<name>": {"kind",
    /// "source", "reason"}}}`.
    pub fn to_json(&self) -> String {
        #[derive(Serialize)]
        struct View<'a> {
            infer: bool,
            tools: &'a IndexMap<String, KindEntry>,
        }
        let mut text = serde_json::to_string_pretty(&View {
            infer: self.infer,
            tools: &self.tools,
        })
        .unwrap_or_default();
        text.push('\n');
        text
    }
}

/// A mapping key as YAML needs it: plain where that is safe, double-quoted otherwise.
fn yaml_key(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
        && !matches!(
            name.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "nan" | "inf"
        );
    if plain {
        name.to_owned()
    } else {
        serde_json::Value::String(name.to_owned()).to_string()
    }
}

/// Lower-case hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

fn yaml_error(path: &Path, error: &yaml_serde::Error) -> Error {
    let location = error.location().map(|l| Location {
        line: l.line(),
        column: l.column(),
    });
    let mut message = error.to_string();
    // The location is printed in front, as file:line:column.
    if let Some(at) = message.find(" at line ") {
        message.truncate(at);
    }
    let hint = if message.contains("unknown field") {
        "tool_kinds.yaml takes the keys infer and tools; each tool takes kind, source and reason"
    } else if message.contains("unknown variant") {
        "kind is one of read, write, sends_out; source is one of you, assistant, catalogue, annotation, inferred, unsure"
    } else if message.contains("duplicate") {
        "name each tool once under tools:"
    } else {
        "fix the YAML at that line; a valid file looks like:\n  infer: true\n  tools:\n    orders:\n      kind: write\n      source: you\n      reason: \"creates an order\""
    };
    Error::Parse {
        path: PathBuf::from(path),
        location,
        message,
        hint: hint.into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    fn parse(text: &str) -> Result<KindsFile> {
        KindsFile::parse(text, Path::new("tool_kinds.yaml"))
    }

    fn entry(kind: Kind, source: KindSource, reason: &str) -> KindEntry {
        KindEntry {
            kind,
            source,
            reason: reason.into(),
        }
    }

    #[test]
    fn the_seed_example_loads() {
        let file = parse(
            "infer: true\ntools:\n  orders:\n    kind: write\n    source: you\n    reason: \"cria um pedido\"\n  notify_customer:\n    kind: sends_out\n    source: you\n    reason: \"manda mensagem ao cliente\"\n",
        )
        .unwrap();
        assert!(file.infer);
        assert_eq!(
            file.tools["orders"],
            entry(Kind::Write, KindSource::You, "cria um pedido")
        );
        assert_eq!(file.tools["notify_customer"].kind, Kind::SendsOut);
        assert_eq!(file.digest().map(str::len), Some(64));
    }

    #[test]
    fn errors_name_file_line_and_column() {
        for (text, expected) in [
            (
                "infer: true\ntools:\n  orders:\n    knd: write\n",
                "tool_kinds.yaml:4:5: tools.orders: unknown field `knd`",
            ),
            (
                "tools:\n  orders:\n    kind: raed\n",
                "tool_kinds.yaml:3:11: tools.orders.kind: unknown variant `raed`",
            ),
            (
                "tools:\n  orders:\n    kind: read\n    source: me\n",
                "tool_kinds.yaml:4:13: tools.orders.source: unknown variant `me`",
            ),
            (
                "infer: true\nrules: []\n",
                "tool_kinds.yaml:2:1: unknown field `rules`",
            ),
            (
                "tools:\n  orders: [read]\n",
                "tool_kinds.yaml:2:11: tools.orders: invalid type: sequence",
            ),
            (
                "tools:\n\torders:\n",
                "tool_kinds.yaml:2:1: found character that cannot start any token",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(
                err.starts_with(expected),
                "{err}\n  does not start with\n{expected}"
            );
        }
    }

    #[test]
    fn a_duplicate_tool_is_an_error() {
        let err = parse("tools:\n  a:\n    kind: read\n  a:\n    kind: write\n").unwrap_err();
        assert!(err.to_string().contains("duplicate"), "{err}");
    }

    #[test]
    fn an_empty_or_comment_only_file_names_nothing() {
        for text in ["", "\n", "# nothing yet\n"] {
            let file = parse(text).unwrap();
            assert!(file.infer && file.tools.is_empty());
        }
    }

    #[test]
    fn written_files_round_trip_byte_for_byte() {
        let mut file = KindsFile::new(false);
        file.tools.insert(
            "zeta".into(),
            entry(Kind::Read, KindSource::Inferred, "'get' in the name reads"),
        );
        file.tools.insert(
            "orders".into(),
            entry(Kind::Write, KindSource::Unsure, "nothing tells"),
        );
        file.tools.insert(
            "get_or_create".into(),
            entry(
                Kind::Write,
                KindSource::Inferred,
                "signals disagree: 'get' reads, but 'create' writes",
            ),
        );
        file.tools.insert(
            "yes".into(),
            entry(Kind::SendsOut, KindSource::You, "quote \"this\"\nand: that"),
        );
        file.tools.insert(
            "enviar_cobrança".into(),
            entry(Kind::SendsOut, KindSource::Assistant, "envia"),
        );
        file.sort_for_review();
        let text = file.to_yaml();
        let loaded = parse(&text).unwrap();
        assert_eq!(loaded.tools, file.tools);
        assert_eq!(loaded.infer, file.infer);
        assert_eq!(loaded.to_yaml(), text);
        let order: Vec<&str> = loaded.tools.keys().map(String::as_str).collect();
        assert_eq!(
            order,
            vec!["orders", "get_or_create", "enviar_cobrança", "yes", "zeta"]
        );
    }

    #[test]
    fn assistant_entries_have_their_own_section_after_the_uncertain() {
        let mut file = KindsFile::new(true);
        file.tools
            .insert("b_mine".into(), entry(Kind::Read, KindSource::You, "mine"));
        file.tools.insert(
            "a_proposed".into(),
            entry(Kind::SendsOut, KindSource::Assistant, "posts to chat"),
        );
        file.tools.insert(
            "c_unsure".into(),
            entry(Kind::Write, KindSource::Unsure, "nothing tells"),
        );
        file.sort_for_review();
        let text = file.to_yaml();
        let body = text.split_once("tools:\n").unwrap().1;
        assert_eq!(
            body,
            "  # Uncertain: nothing told what these do. Check them first.
  c_unsure:
    kind: write
    source: unsure
    reason: \"nothing tells\"
  # Proposed by an assistant (set_tool_kinds): check these, and set source: you on what you keep.
  a_proposed:
    kind: sends_out
    source: assistant
    reason: \"posts to chat\"
  # The rest.
  b_mine:
    kind: read
    source: you
    reason: \"mine\"
"
        );
        let loaded = parse(&text).unwrap();
        assert_eq!(loaded.tools, file.tools);
        assert_eq!(loaded.to_yaml(), text);
    }

    #[test]
    fn json_has_the_same_shape() {
        let mut file = KindsFile::new(true);
        file.tools
            .insert("a".into(), entry(Kind::Read, KindSource::You, "r"));
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&file.to_json()).unwrap(),
            serde_json::json!({"infer": true, "tools": {"a": {"kind": "read", "source": "you", "reason": "r"}}})
        );
    }
}
