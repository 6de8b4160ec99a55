//! From bytes to findings: size and binary checks, PEP 263 source encodings, parsing, and the
//! language's rules. Whatever the input, the result is a list of findings, never a panic: input
//! that cannot be analyzed is itself a finding (`parse-error`, `unsupported-input`).

use std::borrow::Cow;
use std::path::Path;

use crate::finding::{Confidence, Finding, Kind, Severity};
use crate::tree::{self, Grammar};

/// Files larger than this are reported, not parsed: a source file this large is generated or
/// hostile, and the analyzer's time is bounded by what it reads.
pub const MAX_SOURCE_BYTES: usize = 4 * 1024 * 1024;

/// The languages the analyzer reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceLanguage {
    Python,
    Go,
}

impl SourceLanguage {
    /// The language of a file by its extension: `.py`/`.pyw`/`.pyi` and `.go`.
    pub fn from_path(path: &Path) -> Option<Self> {
        match path.extension()?.to_str()? {
            "py" | "pyw" | "pyi" => Some(Self::Python),
            "go" => Some(Self::Go),
            _ => None,
        }
    }
}

/// Analyzes one source file: the findings in line order.
pub fn analyze(source: &[u8], language: SourceLanguage) -> Vec<Finding> {
    let text = match decode(source, language) {
        Ok(text) => text,
        Err(finding) => return vec![finding],
    };
    let bytes = text.as_bytes();
    let grammar = match language {
        SourceLanguage::Python => Grammar::Python,
        SourceLanguage::Go => Grammar::Go,
    };
    let Some(parsed) = tree::parse(grammar, bytes) else {
        return vec![input_finding(1, "the parser gave up on this file".into())];
    };
    let root = parsed.root_node();
    let rules = match language {
        SourceLanguage::Python => crate::python::rules(root, bytes),
        SourceLanguage::Go => crate::go::rules(root, bytes),
    };
    let mut findings = match rules {
        Ok(findings) => findings,
        Err(line) => {
            return vec![input_finding(
                line,
                format!(
                    "the code nests deeper than {} levels; it was not analyzed",
                    tree::MAX_NESTING
                ),
            )];
        }
    };
    findings.extend(trojan_source(
        &text,
        match language {
            SourceLanguage::Python => "B613",
            SourceLanguage::Go => "G116",
        },
    ));
    if let Some(error) = tree::first_error(root) {
        let what = match language {
            SourceLanguage::Python => "Python",
            SourceLanguage::Go => "Go",
        };
        findings.push(Finding {
            rule: "PK001",
            kind: Kind::ParseError,
            severity: Severity::Low,
            confidence: Confidence::High,
            line: tree::line(error),
            column: tree::column(error),
            message: format!(
                "this is not valid {what} from here on; findings after this point may be missing"
            ),
            cwe: None,
        });
    }
    findings.sort_by(|a, b| (a.line, a.column, a.rule).cmp(&(b.line, b.column, b.rule)));
    findings.dedup_by(|a, b| (a.line, a.column, a.rule) == (b.line, b.column, b.rule));
    findings
}

fn input_finding(line: u32, message: String) -> Finding {
    Finding {
        rule: "PK002",
        kind: Kind::UnsupportedInput,
        severity: Severity::Medium,
        confidence: Confidence::High,
        line,
        column: 1,
        message,
        cwe: None,
    }
}

/// The text to analyze, or the finding that says why there is none.
fn decode(source: &[u8], language: SourceLanguage) -> Result<Cow<'_, str>, Finding> {
    if source.len() > MAX_SOURCE_BYTES {
        return Err(input_finding(
            1,
            format!(
                "the file is larger than the analyzer's limit of {MAX_SOURCE_BYTES} bytes; it was not analyzed"
            ),
        ));
    }
    let source = source.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(source);
    if let Some(at) = memchr_nul(source) {
        return Err(input_finding(
            line_of(source, at),
            "the file contains NUL bytes: it is binary, not source code; it was not analyzed"
                .into(),
        ));
    }
    let declared = match language {
        SourceLanguage::Python => coding_declaration(source),
        SourceLanguage::Go => None,
    };
    match declared.as_deref().map(normalise_encoding) {
        None | Some("utf-8") => match std::str::from_utf8(source) {
            Ok(text) => Ok(Cow::Borrowed(text)),
            Err(error) => Err(input_finding(
                line_of(source, error.valid_up_to()),
                match language {
                    SourceLanguage::Python => "the file is not valid UTF-8 and declares no other source encoding (PEP 263); it was not analyzed".into(),
                    SourceLanguage::Go => "the file is not valid UTF-8, as Go source must be; it was not analyzed".into(),
                },
            )),
        },
        // Every other encoding Python accepts for source keeps ASCII as ASCII, and every rule
        // matches ASCII names: decoding the other bytes as Latin-1 keeps lines and columns.
        Some(_) => Ok(Cow::Owned(source.iter().map(|&b| char::from(b)).collect())),
    }
}

fn memchr_nul(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|&b| b == 0)
}

fn line_of(bytes: &[u8], at: usize) -> u32 {
    let newlines = bytes[..at.min(bytes.len())].split(|&b| b == b'\n').count() - 1;
    u32::try_from(newlines).unwrap_or(u32::MAX - 1) + 1
}

/// The PEP 263 declaration on line 1 or 2: `^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)`.
pub(crate) fn coding_declaration(source: &[u8]) -> Option<String> {
    for line in source.split(|&b| b == b'\n').take(2) {
        let trimmed = line
            .iter()
            .position(|&b| !matches!(b, b' ' | b'\t' | b'\x0c'))
            .map_or(&[][..], |i| &line[i..]);
        if trimmed.first() != Some(&b'#') {
            continue;
        }
        let Some(at) = trimmed.windows(6).position(|w| w == b"coding") else {
            continue;
        };
        let rest = &trimmed[at + 6..];
        if !matches!(rest.first(), Some(b':' | b'=')) {
            continue;
        }
        let name: String = rest[1..]
            .iter()
            .skip_while(|&&b| b == b' ' || b == b'\t')
            .take_while(|&&b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
            .map(|&b| char::from(b))
            .collect();
        if !name.is_empty() {
            return Some(name);
        }
    }
    None
}

/// The canonical name of the encodings Python treats as UTF-8.
pub(crate) fn normalise_encoding(name: &str) -> &str {
    let lower = name.to_ascii_lowercase().replace('_', "-");
    if lower == "utf-8" || lower == "utf8" || lower.starts_with("utf-8-") {
        "utf-8"
    } else {
        name
    }
}

/// Bidirectional control characters (CVE-2021-42574): text that reads one way and runs another.
fn trojan_source(text: &str, rule: &'static str) -> Vec<Finding> {
    const BIDI: [char; 11] = [
        '\u{202A}', '\u{202B}', '\u{202C}', '\u{202D}', '\u{202E}', '\u{2066}', '\u{2067}',
        '\u{2068}', '\u{2069}', '\u{200E}', '\u{200F}',
    ];
    let mut findings = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if let Some((column, ch)) = line.char_indices().find(|(_, c)| BIDI.contains(c)) {
            findings.push(Finding {
                rule,
                kind: Kind::TrojanSource,
                severity: Severity::High,
                confidence: Confidence::Medium,
                line: u32::try_from(index + 1).unwrap_or(u32::MAX),
                column: u32::try_from(column + 1).unwrap_or(u32::MAX),
                message: format!(
                    "a bidirectional control character (U+{:04X}) makes this line read differently from how it runs",
                    u32::from(ch)
                ),
                cwe: Some(838),
            });
        }
    }
    findings
}
