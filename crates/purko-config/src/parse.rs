//! Reading one manifest file: its documents, their `apiVersion` and `kind`, then the typed
//! manifest of that kind and the checks serde cannot express.
//!
//! Each document is read twice by `yaml_serde`: once for its head (`apiVersion`, `kind`) and once
//! as the typed manifest, so that an unknown kind is reported as such and not as a list of
//! unexpected fields. Every error names the file, and the line and column where it can; the
//! document's number is added when the file holds more than one.

use std::fmt;
use std::path::Path;

use serde::Serialize;
use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};

use crate::agent::{Agent, AgentDocument};
use crate::error::{Error, Location, Result};
use crate::locate::{NodePath, locate};
use crate::mcp_server::{McpServer, McpServerDocument};
use crate::validate::{self, Problem};

/// The one `apiVersion` this version of Purko reads.
pub const API_VERSION: &str = "purko.io/v1alpha1";
/// The kinds this version of Purko reads.
pub const SUPPORTED_KINDS: &[&str] = &["Agent", "MCPServer"];
/// Kinds of the design that are not read yet.
const LATER_KINDS: &[&str] = &["Workflow"];

/// One document of a manifest file.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind")]
pub enum Manifest {
    Agent(Agent),
    #[serde(rename = "MCPServer")]
    McpServer(McpServer),
}

/// Reads every manifest in `text`, a file of one or more YAML documents; `path` names the file
/// in errors and is the base of the relative paths the manifests hold.
pub fn parse(text: &str, path: &Path) -> Result<Vec<Manifest>> {
    parse_file(text, path).map(|parsed| parsed.manifests)
}

pub(crate) struct Parsed {
    pub manifests: Vec<Manifest>,
    /// Whether the file holds more than one document.
    pub several: bool,
}

pub(crate) fn parse_file(text: &str, path: &Path) -> Result<Parsed> {
    let mut heads = Vec::new();
    for (index, document) in yaml_serde::Deserializer::from_str(text).enumerate() {
        match Head::deserialize(document) {
            Ok(head) => heads.push(head),
            Err(e) => return Err(yaml_error(path, &e, (index > 0).then_some(index + 1))),
        }
    }
    let several = heads.len() > 1;
    let mut manifests = Vec::with_capacity(heads.len());
    let bodies = yaml_serde::Deserializer::from_str(text);
    for (index, (head, body)) in heads.into_iter().zip(bodies).enumerate() {
        let doc = Doc {
            text,
            path,
            index,
            several,
        };
        let Head::Mapping { api_version, kind } = head else {
            continue;
        };
        check_api_version(api_version.as_deref()).map_err(|p| doc.problem(p))?;
        match check_kind(kind.as_deref()).map_err(|p| doc.problem(p))? {
            "Agent" => {
                let raw = AgentDocument::deserialize(body)
                    .map_err(|e| yaml_error(path, &e, doc.number()))?;
                validate::agent(&raw).map_err(|p| doc.problem(p))?;
                manifests.push(Manifest::Agent(Agent {
                    source: path.to_owned(),
                    document: index + 1,
                    api_version: raw.api_version,
                    metadata: raw.metadata,
                    spec: raw.spec,
                }));
            }
            "MCPServer" => {
                let raw = McpServerDocument::deserialize(body)
                    .map_err(|e| yaml_error(path, &e, doc.number()))?;
                validate::mcp_server(&raw).map_err(|p| doc.problem(p))?;
                manifests.push(Manifest::McpServer(McpServer {
                    source: path.to_owned(),
                    document: index + 1,
                    api_version: raw.api_version,
                    metadata: raw.metadata,
                    spec: raw.spec.into_spec(),
                }));
            }
            other => unreachable!("check_kind returned the unsupported kind {other}"),
        }
    }
    if manifests.is_empty() {
        let message = if text.trim().is_empty() {
            "the file is empty"
        } else {
            "the file holds no manifest, only comments or empty documents"
        };
        return Err(Error::Manifest {
            path: path.to_owned(),
            location: None,
            document: None,
            message: message.into(),
            hint: format!(
                "write a manifest that starts with apiVersion: {API_VERSION} and kind: Agent or kind: MCPServer, or remove the file"
            ),
        });
    }
    Ok(Parsed { manifests, several })
}

fn check_api_version(api_version: Option<&str>) -> Result<(), Problem> {
    match api_version {
        Some(API_VERSION) => Ok(()),
        None => Err(Problem::new(
            NodePath::default(),
            "the document has no apiVersion",
            format!("start each manifest with apiVersion: {API_VERSION}"),
        )),
        Some(other) => Err(Problem::new(
            NodePath::default().key("apiVersion"),
            format!("'{other}' is not supported, expected {API_VERSION}"),
            format!("write apiVersion: {API_VERSION}"),
        )),
    }
}

fn check_kind(kind: Option<&str>) -> Result<&'static str, Problem> {
    let supported = SUPPORTED_KINDS.join(", ");
    let hint = format!("write kind: {}", SUPPORTED_KINDS.join(" or kind: "));
    match kind {
        Some(kind) => {
            if let Some(known) = SUPPORTED_KINDS.iter().find(|k| **k == kind) {
                return Ok(known);
            }
            let message = if LATER_KINDS.contains(&kind) {
                format!("'{kind}' is not supported yet; supported kinds: {supported}")
            } else {
                format!("unknown kind '{kind}'; supported kinds: {supported}")
            };
            Err(Problem::new(NodePath::default().key("kind"), message, hint))
        }
        None => Err(Problem::new(
            NodePath::default(),
            format!("the document has no kind; supported kinds: {supported}"),
            hint,
        )),
    }
}

/// One document of a file, to place errors.
struct Doc<'a> {
    text: &'a str,
    path: &'a Path,
    /// From 0.
    index: usize,
    several: bool,
}

impl Doc<'_> {
    fn number(&self) -> Option<usize> {
        self.several.then_some(self.index + 1)
    }

    fn problem(&self, problem: Problem) -> Error {
        located(problem, self.text, self.path, self.index, self.number())
    }
}

/// An error for `problem` in document `index` (from 0) of the file `text`, at the problem's
/// node.
pub(crate) fn located(
    problem: Problem,
    text: &str,
    path: &Path,
    index: usize,
    number: Option<usize>,
) -> Error {
    let message = if problem.at.0.is_empty() {
        problem.message
    } else {
        format!("{}: {}", problem.at, problem.message)
    };
    Error::Manifest {
        path: path.to_owned(),
        location: locate(text, index, &problem.at),
        document: number,
        message,
        hint: problem.hint,
    }
}

/// A `yaml_serde` error, with its location taken out of the message and put where every other
/// error has it.
fn yaml_error(path: &Path, error: &yaml_serde::Error, document: Option<usize>) -> Error {
    let location = error.location().map(|l| Location {
        line: l.line(),
        column: l.column(),
    });
    let mut message = error.to_string();
    if let Some(location) = &location {
        let suffix = format!(" at line {} column {}", location.line, location.column);
        if let Some(at) = message.find(&suffix) {
            message.replace_range(at..at + suffix.len(), "");
        }
    }
    let message = message.replace('`', "'");
    let hint = if message.contains("unknown field") {
        "remove the field or correct its spelling; the message lists the fields allowed there"
    } else if message.contains("missing field") {
        "add the field; crates/purko-config/README.md describes each manifest field"
    } else if message.contains("unknown variant") || message.contains("unknown method") {
        "use one of the values the message lists"
    } else if message.contains("expected a manifest") {
        "write each manifest as a mapping that starts with apiVersion: purko.io/v1alpha1 and kind: Agent or kind: MCPServer; separate manifests with ---"
    } else if message.contains("invalid type") {
        "give the field a value of the type the message expects"
    } else {
        "correct the YAML at that place; crates/purko-config/README.md describes each manifest field"
    };
    Error::Manifest {
        path: path.to_owned(),
        location,
        document,
        message,
        hint: hint.into(),
    }
}

/// What a document says it is, read before the document itself.
enum Head {
    /// An empty document (between two `---`, or only comments): skipped.
    Empty,
    Mapping {
        api_version: Option<String>,
        kind: Option<String>,
    },
}

impl<'de> Deserialize<'de> for Head {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(HeadVisitor)
    }
}

struct HeadVisitor;

impl<'de> Visitor<'de> for HeadVisitor {
    type Value = Head;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a manifest: a mapping with apiVersion, kind, metadata and spec")
    }

    fn visit_unit<E: serde::de::Error>(self) -> Result<Head, E> {
        Ok(Head::Empty)
    }

    fn visit_none<E: serde::de::Error>(self) -> Result<Head, E> {
        Ok(Head::Empty)
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Head, A::Error> {
        let (mut api_version, mut kind) = (None, None);
        while let Some(key) = map.next_key::<yaml_serde::Value>()? {
            match key.as_str() {
                Some("apiVersion") => api_version = Some(map.next_value::<String>()?),
                Some("kind") => kind = Some(map.next_value::<String>()?),
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Head::Mapping { api_version, kind })
    }
}
