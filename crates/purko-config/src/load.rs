//! Loading manifests from files and folders. A folder is read recursively, `*.yaml` and `*.yml`
//! files only, in sorted path order, so the result never depends on the file system's order.
//! Agents are unique by `namespace/name` across everything loaded together, and so are MCP
//! servers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::agent::Agent;
use crate::error::{Error, Result};
use crate::locate::NodePath;
use crate::mcp_server::McpServer;
use crate::parse::{Manifest, located, parse_file};
use crate::validate::Problem;

/// Everything loaded, in load order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Manifests {
    pub agents: Vec<Agent>,
    pub mcp_servers: Vec<McpServer>,
}

impl Manifests {
    /// The agent whose key (`namespace/name`) is `key`.
    pub fn agent(&self, key: &str) -> Option<&Agent> {
        self.agents.iter().find(|a| a.key() == key)
    }

    /// The MCP server whose key (`namespace/name`) is `key`.
    pub fn mcp_server(&self, key: &str) -> Option<&McpServer> {
        self.mcp_servers.iter().find(|s| s.key() == key)
    }
}

/// Loads the manifests in `paths`: files (whatever their extension) and folders. No paths give
/// no manifests; a folder without manifest files is an error.
pub fn load(paths: &[PathBuf]) -> Result<Manifests> {
    let mut files = Vec::new();
    for path in paths {
        collect(path, &mut files)?;
    }
    let mut manifests = Manifests::default();
    // (kind, key) → (file, document) of the first definition
    let mut first: HashMap<(&str, String), (PathBuf, usize)> = HashMap::new();
    let mut seen_files = std::collections::HashSet::new();
    for file in files {
        if !seen_files.insert(file.clone()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).map_err(|e| read_error(&file, e))?;
        let parsed = parse_file(&text, &file)?;
        for manifest in parsed.manifests {
            let (what, key, document) = match &manifest {
                Manifest::Agent(agent) => ("agent", agent.key(), agent.document),
                Manifest::McpServer(server) => ("MCP server", server.key(), server.document),
            };
            if let Some((path, first_document)) = first.get(&(what, key.clone())) {
                let plural = if what == "agent" { "agent" } else { "server" };
                let problem = Problem::new(
                    NodePath::default().key("metadata").key("name"),
                    format!(
                        "the {what} '{key}' is defined twice, first in {} (document {first_document})",
                        path.display()
                    ),
                    format!(
                        "give each {plural} its own name or namespace, or remove one of the two"
                    ),
                );
                let number = parsed.several.then_some(document);
                return Err(located(problem, &text, &file, document - 1, number));
            }
            first.insert((what, key), (file.clone(), document));
            match manifest {
                Manifest::Agent(agent) => manifests.agents.push(agent),
                Manifest::McpServer(server) => manifests.mcp_servers.push(server),
            }
        }
    }
    Ok(manifests)
}

fn read_error(path: &Path, source: std::io::Error) -> Error {
    if source.kind() == std::io::ErrorKind::NotFound {
        Error::Missing {
            path: path.to_owned(),
        }
    } else {
        Error::Read {
            path: path.to_owned(),
            source,
        }
    }
}

fn collect(path: &Path, files: &mut Vec<PathBuf>) -> Result<()> {
    let metadata = std::fs::metadata(path).map_err(|e| read_error(path, e))?;
    if !metadata.is_dir() {
        files.push(path.to_owned());
        return Ok(());
    }
    let mut found = Vec::new();
    walk(path, &mut found)?;
    if found.is_empty() {
        return Err(Error::NoManifests {
            path: path.to_owned(),
        });
    }
    found.sort();
    files.extend(found);
    Ok(())
}

/// Manifest files under `dir`, at any depth. Symbolic links to folders are not followed, so a
/// link cycle cannot loop.
fn walk(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| read_error(dir, e))?;
    for entry in entries {
        let entry = entry.map_err(|e| read_error(dir, e))?;
        let path = entry.path();
        let file_type = entry.file_type().map_err(|e| read_error(&path, e))?;
        if file_type.is_dir() {
            walk(&path, found)?;
        } else if is_manifest_name(&path) && path.is_file() {
            found.push(path);
        }
    }
    Ok(())
}

fn is_manifest_name(path: &Path) -> bool {
    path.extension()
        .is_some_and(|ext| ext == "yaml" || ext == "yml")
}
