//! A finding of the static analyzer, in the shape the `static-analysis` tool returns.

use serde::Serialize;

/// How bad a finding is if it is real.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Severity {
    Low,
    Medium,
    High,
}

/// How sure the rule is that the finding is real.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Confidence {
    Low,
    Medium,
    High,
}

/// What a finding is about. The last two are not weaknesses but input the analyzer could not
/// fully read: they are reported rather than silently skipped.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Kind {
    Eval,
    Exec,
    DynamicImport,
    ShellInjection,
    Subprocess,
    InsecureDeserialization,
    HardcodedSecret,
    InsecureTls,
    WeakHash,
    WeakCipher,
    SqlInjection,
    Tempfile,
    FilePermissions,
    Network,
    BareExcept,
    TryExceptPass,
    AssertUsed,
    RequestWithoutTimeout,
    InsecureRandom,
    XmlUntrusted,
    DebugMode,
    ArchiveTraversal,
    PathTraversal,
    UnsafeCode,
    TrojanSource,
    /// The source does not parse; findings after the error may be missing.
    ParseError,
    /// Binary, undecodable or too large to analyze.
    UnsupportedInput,
}

impl Kind {
    /// The kebab-case word, as serialised.
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Eval => "eval",
            Kind::Exec => "exec",
            Kind::DynamicImport => "dynamic-import",
            Kind::ShellInjection => "shell-injection",
            Kind::Subprocess => "subprocess",
            Kind::InsecureDeserialization => "insecure-deserialization",
            Kind::HardcodedSecret => "hardcoded-secret",
            Kind::InsecureTls => "insecure-tls",
            Kind::WeakHash => "weak-hash",
            Kind::WeakCipher => "weak-cipher",
            Kind::SqlInjection => "sql-injection",
            Kind::Tempfile => "tempfile",
            Kind::FilePermissions => "file-permissions",
            Kind::Network => "network",
            Kind::BareExcept => "bare-except",
            Kind::TryExceptPass => "try-except-pass",
            Kind::AssertUsed => "assert-used",
            Kind::RequestWithoutTimeout => "request-without-timeout",
            Kind::InsecureRandom => "insecure-random",
            Kind::XmlUntrusted => "xml-untrusted",
            Kind::DebugMode => "debug-mode",
            Kind::ArchiveTraversal => "archive-traversal",
            Kind::PathTraversal => "path-traversal",
            Kind::UnsafeCode => "unsafe-code",
            Kind::TrojanSource => "trojan-source",
            Kind::ParseError => "parse-error",
            Kind::UnsupportedInput => "unsupported-input",
        }
    }
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Low => "LOW",
            Severity::Medium => "MEDIUM",
            Severity::High => "HIGH",
        }
    }
}

/// One finding. `rule` is Bandit's (`B307`) or gosec's (`G401`) id where the rule covers what
/// theirs does, `PK…` for Purko's own; `line` and `column` are 1-based (column in bytes); `cwe`
/// is the CWE number (`78`, not `"CWE-78"`), absent for input problems.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub kind: Kind,
    pub severity: Severity,
    pub confidence: Confidence,
    pub line: u32,
    pub column: u32,
    pub message: String,
    pub cwe: Option<u32>,
}

/// A rule's fixed part: everything but where and the message's details.
#[allow(dead_code, reason = "the analyzer's rules are the users")]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Rule {
    pub id: &'static str,
    pub kind: Kind,
    pub severity: Severity,
    pub confidence: Confidence,
    pub cwe: u32,
}

#[allow(dead_code, reason = "the analyzer's rules are the users")]
impl Rule {
    pub(crate) const fn new(
        id: &'static str,
        kind: Kind,
        severity: Severity,
        confidence: Confidence,
        cwe: u32,
    ) -> Self {
        Self {
            id,
            kind,
            severity,
            confidence,
            cwe,
        }
    }

    pub(crate) fn at(self, node: tree_sitter::Node<'_>, message: impl Into<String>) -> Finding {
        Finding {
            rule: self.id,
            kind: self.kind,
            severity: self.severity,
            confidence: self.confidence,
            line: crate::tree::line(node),
            column: crate::tree::column(node),
            message: message.into(),
            cwe: (self.cwe != 0).then_some(self.cwe),
        }
    }

    pub(crate) const fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    pub(crate) const fn with_confidence(mut self, confidence: Confidence) -> Self {
        self.confidence = confidence;
        self
    }
}
