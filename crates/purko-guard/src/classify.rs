//! The order that decides a tool's kind (DESIGN.md section 3): the `tool_kinds.yaml` entry,
//! then the catalogue marks, then inference, then a write nobody could tell. The first that
//! applies wins, so an entry in the file always decides.

use purko_protocol::{Classification, Kind, KindSource, ToolSpec};

use crate::destination::DestinationMap;
use crate::infer::infer;
use crate::kinds_file::KindsFile;

/// Whether inference decides tools that neither the file nor the catalogue marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inference {
    On,
    Off,
}

impl Inference {
    /// Inference is on only when the file allows it and nobody turned it off.
    pub fn effective(file: Option<&KindsFile>, requested: Inference) -> Inference {
        match (requested, file.is_none_or(|f| f.infer)) {
            (Inference::On, true) => Inference::On,
            _ => Inference::Off,
        }
    }

    pub fn is_on(self) -> bool {
        self == Inference::On
    }
}

/// Classifies one tool.
pub fn classify(
    tool: &ToolSpec,
    file: Option<&KindsFile>,
    inference: Inference,
    destinations: &DestinationMap,
) -> Classification {
    if let Some(entry) = file.and_then(|f| f.tools.get(&tool.name)) {
        let reason = if entry.reason.trim().is_empty() {
            "named in tool_kinds.yaml".to_owned()
        } else {
            entry.reason.clone()
        };
        return settled(entry.kind, entry.source, reason);
    }
    let marks = tool.marks;
    if !marks.is_empty() {
        let (kind, mark) = if marks.egress {
            (Kind::SendsOut, "egress")
        } else if marks.destructive {
            (Kind::Write, "destructive")
        } else {
            (Kind::Read, "read_only")
        };
        return settled(
            kind,
            KindSource::Catalogue,
            format!("the catalogue marks it {mark}"),
        );
    }
    match inference {
        Inference::On => infer(tool, destinations),
        Inference::Off => settled(
            Kind::Write,
            KindSource::Unsure,
            "inference is off and neither tool_kinds.yaml nor the catalogue names it; treated as a write".into(),
        ),
    }
}

fn settled(kind: Kind, source: KindSource, reason: String) -> Classification {
    Classification {
        kind,
        source,
        reason,
        signals: Vec::new(),
        conflicted: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds_file::KindEntry;
    use pretty_assertions::assert_eq;
    use purko_protocol::Marks;

    fn send_email() -> ToolSpec {
        ToolSpec::new("send_email", "Send an email")
    }

    #[test]
    fn the_file_wins_over_marks_and_inference() {
        let mut file = KindsFile::new(true);
        file.tools.insert(
            "send_email".into(),
            KindEntry {
                kind: Kind::Read,
                source: KindSource::You,
                reason: "a dry-run stub".into(),
            },
        );
        let mut tool = send_email();
        tool.marks = Marks {
            egress: true,
            ..Marks::default()
        };
        let got = classify(
            &tool,
            Some(&file),
            Inference::On,
            &DestinationMap::default(),
        );
        assert_eq!(
            (got.kind, got.source, got.reason.as_str()),
            (Kind::Read, KindSource::You, "a dry-run stub")
        );
    }

    #[test]
    fn marks_win_over_inference_and_egress_wins_among_marks() {
        let mut tool = ToolSpec::new("list_things", "List things");
        tool.marks = Marks {
            read_only: true,
            destructive: true,
            egress: false,
        };
        let got = classify(&tool, None, Inference::On, &DestinationMap::default());
        assert_eq!((got.kind, got.source), (Kind::Write, KindSource::Catalogue));
        tool.marks.egress = true;
        assert_eq!(
            classify(&tool, None, Inference::On, &DestinationMap::default()).kind,
            Kind::SendsOut
        );
    }

    #[test]
    fn without_inference_an_unnamed_tool_is_an_unsure_write() {
        let tool = ToolSpec::new("list_things", "List things");
        let got = classify(&tool, None, Inference::Off, &DestinationMap::default());
        assert_eq!((got.kind, got.source), (Kind::Write, KindSource::Unsure));
    }

    #[test]
    fn infer_false_in_the_file_turns_inference_off() {
        let file = KindsFile::new(false);
        assert_eq!(
            Inference::effective(Some(&file), Inference::On),
            Inference::Off
        );
        assert_eq!(Inference::effective(None, Inference::Off), Inference::Off);
        assert_eq!(Inference::effective(None, Inference::On), Inference::On);
    }
}
