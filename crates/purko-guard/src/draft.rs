//! Drafting `tool_kinds.yaml`: every tool with its kind, source and reason, the entries already
//! in a kinds file kept as they are, and the uncertain ones first for a person to read.

use std::path::Path;

use purko_protocol::{Classification, ToolSpec};

use crate::catalogue::each_tool;
use crate::classify::{Inference, classify};
use crate::destination::DestinationMap;
use crate::error::Result;
use crate::kinds_file::{KindEntry, KindsFile};

/// A draft being built, one tool at a time.
#[derive(Debug)]
pub struct Draft {
    file: KindsFile,
    inference: Inference,
}

impl Draft {
    /// Starts from a kinds file's entries, if there is one. Inference is on only when the file
    /// and the caller both allow it, and the draft says which it was.
    pub fn new(kinds: Option<KindsFile>, requested: Inference) -> Self {
        let inference = Inference::effective(kinds.as_ref(), requested);
        let mut file = kinds.unwrap_or_else(|| KindsFile::new(inference.is_on()));
        file.infer = inference.is_on();
        Self { file, inference }
    }

    /// Classifies a tool, unless the kinds file already names it.
    pub fn add(&mut self, tool: &ToolSpec) {
        if !self.file.tools.contains_key(&tool.name) {
            let destinations = DestinationMap::from_schema(tool.input_schema.as_ref());
            let classification = classify(tool, Some(&self.file), self.inference, &destinations);
            self.add_classified(&tool.name, &classification);
        }
    }

    /// Records a tool classified elsewhere, unless the kinds file already names it.
    pub fn add_classified(&mut self, name: &str, c: &Classification) {
        if !self.file.tools.contains_key(name) {
            let entry = KindEntry {
                kind: c.kind,
                source: c.source,
                reason: c.reason.clone(),
            };
            self.file.tools.insert(name.to_owned(), entry);
        }
    }

    /// The file, uncertain entries first.
    pub fn finish(mut self) -> KindsFile {
        self.file.sort_for_review();
        self.file
    }
}

/// Drafts the kinds of the tools in a tools file's text, holding one tool at a time.
pub fn draft_tools_file(
    text: &str,
    path: &Path,
    kinds: Option<KindsFile>,
    inference: Inference,
) -> Result<KindsFile> {
    let mut draft = Draft::new(kinds, inference);
    each_tool(text, path, |tool| draft.add(&tool))?;
    Ok(draft.finish())
}
