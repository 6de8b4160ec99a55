//! Go rules: imports resolved to their paths (`md5.New` is `crypto/md5.New` whatever the
//! import's local name), then gosec's G1xx–G6xx for the listed kinds, and secrets.

mod calls;

use rustc_hash::FxHashMap;
use tree_sitter::Node;

use crate::finding::{Confidence as C, Finding, Kind as K, Rule, Severity as S};
use crate::secrets::{high_entropy, secret_binding, value_secret};
use crate::tree::{Place, descendants, named_children, text, walk};

/// One Go file: its imports by local name, and the constants it declares.
pub(crate) struct File<'a> {
    pub src: &'a [u8],
    imports: FxHashMap<String, String>,
    pub constants: FxHashMap<String, String>,
}

impl File<'_> {
    /// `pkg.Name` with `pkg` an import: the import path and the name (`crypto/md5.New`).
    pub(crate) fn qualify(&self, node: Node<'_>) -> Option<String> {
        match node.kind() {
            "selector_expression" => {
                let operand = node.child_by_field_name("operand")?;
                let field = text(node.child_by_field_name("field")?, self.src);
                if operand.kind() == "identifier" {
                    let path = self.imports.get(text(operand, self.src))?;
                    Some(format!("{path}.{field}"))
                } else {
                    None
                }
            }
            "qualified_type" => {
                let package = text(node.child_by_field_name("package")?, self.src);
                let name = text(node.child_by_field_name("name")?, self.src);
                Some(format!("{}.{name}", self.imports.get(package)?))
            }
            "parenthesized_expression" | "unary_expression" => {
                // Iterative: parentheses nest as deep as the input likes.
                let mut inner = node;
                while matches!(
                    inner.kind(),
                    "parenthesized_expression" | "unary_expression"
                ) {
                    inner = named_children(inner).into_iter().last()?;
                }
                self.qualify(inner)
            }
            _ => None,
        }
    }

    pub(crate) fn imports(&self, path: &str) -> bool {
        self.imports.values().any(|p| p == path)
    }
}

/// The value of a Go string literal, escapes left as written.
pub(crate) fn string_value(node: Node<'_>, src: &[u8]) -> Option<String> {
    match node.kind() {
        "interpreted_string_literal" => {
            let raw = text(node, src);
            Some(raw.get(1..raw.len().saturating_sub(1))?.to_owned())
        }
        "raw_string_literal" => Some(text(node, src).trim_matches('`').to_owned()),
        "literal_element" | "parenthesized_expression" => {
            let mut inner = node;
            while matches!(inner.kind(), "literal_element" | "parenthesized_expression") {
                inner = named_children(inner).into_iter().next()?;
            }
            string_value(inner, src)
        }
        _ => None,
    }
}

fn local_name(path: &str) -> String {
    let mut segments = path.rsplit('/');
    let mut last = segments.next().unwrap_or(path);
    if last.len() >= 2 && last.starts_with('v') && last[1..].chars().all(|c| c.is_ascii_digit()) {
        last = segments.next().unwrap_or(last);
    }
    let last = last.split('.').next().unwrap_or(last);
    last.trim_start_matches("go-").replace('-', "_")
}

const IMPORT_BLOCKLIST: &[(&str, Rule, &str)] = &[
    (
        "crypto/md5",
        Rule::new("G501", K::WeakHash, S::Medium, C::High, 327),
        "crypto/md5 is broken for security use",
    ),
    (
        "crypto/des",
        Rule::new("G502", K::WeakCipher, S::Medium, C::High, 327),
        "DES is broken",
    ),
    (
        "crypto/rc4",
        Rule::new("G503", K::WeakCipher, S::Medium, C::High, 327),
        "RC4 is broken",
    ),
    (
        "net/http/cgi",
        Rule::new("G504", K::Network, S::Medium, C::High, 327),
        "net/http/cgi trusts the Proxy header (httpoxy) before Go 1.6.3",
    ),
    (
        "crypto/sha1",
        Rule::new("G505", K::WeakHash, S::Medium, C::High, 327),
        "SHA-1 is broken for security use",
    ),
    (
        "golang.org/x/crypto/md4",
        Rule::new("G506", K::WeakHash, S::Medium, C::High, 327),
        "MD4 is broken",
    ),
    (
        "golang.org/x/crypto/ripemd160",
        Rule::new("G507", K::WeakHash, S::Medium, C::High, 327),
        "RIPEMD-160 is deprecated and weak",
    ),
    (
        "net/http/pprof",
        Rule::new("G108", K::DebugMode, S::High, C::High, 200),
        "importing net/http/pprof serves profiling data on /debug/pprof",
    ),
];

const SECRET_VALUE: Rule = Rule::new("PK101", K::HardcodedSecret, S::High, C::High, 798);
const SECRET_NAME: Rule = Rule::new("G101", K::HardcodedSecret, S::High, C::Medium, 798);
const TLS: Rule = Rule::new("G402", K::InsecureTls, S::High, C::High, 295);
const SLOWLORIS: Rule = Rule::new("G112", K::RequestWithoutTimeout, S::Medium, C::Low, 400);
const SQL_CONCAT: Rule = Rule::new("G202", K::SqlInjection, S::Medium, C::High, 89);

/// The findings, or `Err(line)` when the code nests too deep to analyze.
pub(crate) fn rules(root: Node<'_>, src: &[u8]) -> Result<Vec<Finding>, u32> {
    let mut file = File {
        src,
        imports: FxHashMap::default(),
        constants: FxHashMap::default(),
    };
    let mut out = Vec::new();
    // Imports and constants are declarations: expressions are not walked.
    crate::tree::pruned(root, is_declaration_level, |node| match node.kind() {
        "import_spec" => import(node, &mut file, &mut out),
        "const_spec" => {
            if let (Some(name), Some(value)) = (
                node.child_by_field_name("name"),
                node.child_by_field_name("value"),
            ) && let Some(first) = named_children(value).first()
                && let Some(literal) = string_value(*first, src)
            {
                file.constants.insert(text(name, src).to_owned(), literal);
            }
        }
        _ => {}
    });
    let deep = walk(root, |node, place| match node.kind() {
        "call_expression" => calls::call(node, &file, &mut out),
        "interpreted_string_literal" | "raw_string_literal" => {
            if let Some(value) = string_value(node, src)
                && let Some(what) = value_secret(&value)
            {
                out.push(SECRET_VALUE.at(node, format!("{what} is written in the source")));
            }
        }
        "const_spec" | "var_spec" => {
            let mut cursor = node.walk();
            let names: Vec<Node<'_>> = node.children_by_field_name("name", &mut cursor).collect();
            let values = node
                .child_by_field_name("value")
                .map(named_children)
                .unwrap_or_default();
            for (name, value) in names.iter().zip(values) {
                secret(text(*name, src), value, src, &mut out);
            }
        }
        "short_var_declaration" | "assignment_statement" => {
            let left = node
                .child_by_field_name("left")
                .map(named_children)
                .unwrap_or_default();
            let right = node
                .child_by_field_name("right")
                .map(named_children)
                .unwrap_or_default();
            for (target, value) in left.iter().zip(right) {
                let name = match target.kind() {
                    "selector_expression" => {
                        target.child_by_field_name("field").map(|f| text(f, src))
                    }
                    "identifier" => Some(text(*target, src)),
                    _ => None,
                };
                if let Some(name) = name {
                    secret(name, value, src, &mut out);
                    if name == "InsecureSkipVerify" && value.kind() == "true" {
                        out.push(TLS.at(node, "InsecureSkipVerify = true accepts any certificate"));
                    }
                }
            }
        }
        "keyed_element" => keyed(node, &file, &mut out),
        "binary_expression" => binary(node, place, &file, &mut out),
        "composite_literal" => composite(node, &file, &mut out),
        _ => {}
    });
    match deep {
        Some(node) => Err(crate::tree::line(node)),
        None => Ok(out),
    }
}

fn import(node: Node<'_>, file: &mut File<'_>, out: &mut Vec<Finding>) {
    let src = file.src;
    let Some(path) = node
        .child_by_field_name("path")
        .and_then(|p| string_value(p, src))
    else {
        return;
    };
    for (blocked, rule, why) in IMPORT_BLOCKLIST {
        if path == *blocked {
            out.push(rule.at(node, format!("import of {path}: {why}")));
        }
    }
    let local = match node.child_by_field_name("name") {
        Some(name) if name.kind() == "package_identifier" => text(name, src).to_owned(),
        Some(_) => return,
        None => local_name(&path),
    };
    file.imports.insert(local, path);
}

fn secret(name: &str, value: Node<'_>, src: &[u8], out: &mut Vec<Finding>) {
    let Some(literal) = string_value(value, src) else {
        return;
    };
    if secret_binding(name, &literal) {
        let rule = if high_entropy(&literal) {
            SECRET_NAME.with_confidence(C::High)
        } else {
            SECRET_NAME
        };
        out.push(rule.at(value, format!("possible hardcoded credential in `{name}`")));
    }
}

fn keyed(node: Node<'_>, file: &File<'_>, out: &mut Vec<Finding>) {
    let src = file.src;
    let (Some(key), Some(value)) = (
        node.child_by_field_name("key"),
        node.child_by_field_name("value"),
    ) else {
        return;
    };
    let key_text = string_value(key, src).unwrap_or_else(|| text(key, src).to_owned());
    secret(&key_text, value, src, out);
}

fn binary(node: Node<'_>, place: &Place<'_, '_>, file: &File<'_>, out: &mut Vec<Finding>) {
    let src = file.src;
    let operator = node.child_by_field_name("operator").map(|o| text(o, src));
    let (Some(left), Some(right)) = (
        node.child_by_field_name("left"),
        node.child_by_field_name("right"),
    ) else {
        return;
    };
    match operator {
        Some("==" | "!=") if left.kind() == "identifier" => {
            secret(text(left, src), right, src, out);
        }
        Some("+") => {
            if place
                .parent()
                .is_some_and(|p| p.kind() == "binary_expression")
            {
                return;
            }
            let mut leftmost = left;
            while leftmost.kind() == "binary_expression" {
                match leftmost.child_by_field_name("left") {
                    Some(l) => leftmost = l,
                    None => return,
                }
            }
            let dynamic = descendants(node).any(|n| {
                matches!(
                    n.kind(),
                    "identifier" | "call_expression" | "selector_expression"
                ) && !(n.kind() == "identifier" && file.constants.contains_key(text(n, src)))
            });
            if dynamic && string_value(leftmost, src).is_some_and(|s| calls::looks_like_sql(&s)) {
                out.push(SQL_CONCAT.at(
                    node,
                    "SQL text is built by concatenation: pass values as query parameters",
                ));
            }
        }
        _ => {}
    }
}

/// `tls.Config{...}` (G402) and `http.Server{...}` (G112).
fn composite(node: Node<'_>, file: &File<'_>, out: &mut Vec<Finding>) {
    let src = file.src;
    let Some(kind) = node
        .child_by_field_name("type")
        .and_then(|t| file.qualify(t))
    else {
        return;
    };
    let fields: Vec<(String, Node<'_>)> = node
        .child_by_field_name("body")
        .map(named_children)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.kind() == "keyed_element")
        .filter_map(|e| {
            let key = e.child_by_field_name("key")?;
            let value = e.child_by_field_name("value")?;
            Some((
                text(key, src).to_owned(),
                named_children(value).into_iter().next()?,
            ))
        })
        .collect();
    match kind.as_str() {
        "crypto/tls.Config" => {
            for (key, value) in &fields {
                let value_path = file.qualify(*value).unwrap_or_default();
                let old = matches!(
                    value_path.as_str(),
                    "crypto/tls.VersionSSL30"
                        | "crypto/tls.VersionTLS10"
                        | "crypto/tls.VersionTLS11"
                ) || matches!(text(*value, src), "0x0300" | "0x0301" | "0x0302");
                match key.as_str() {
                    "InsecureSkipVerify" if value.kind() == "true" => {
                        out.push(
                            TLS.at(*value, "InsecureSkipVerify: true accepts any certificate"),
                        );
                    }
                    "MinVersion" | "MaxVersion" if old => out.push(TLS.at(
                        *value,
                        format!("{key} allows a broken TLS version: use tls.VersionTLS12 or later"),
                    )),
                    "CipherSuites" => {
                        for suite in descendants(*value) {
                            let name = text(suite, src);
                            if suite.kind() == "selector_expression"
                                && (name.contains("RC4")
                                    || name.contains("3DES")
                                    || name.ends_with("_CBC_SHA256")
                                    || name.contains("TLS_RSA_"))
                            {
                                out.push(
                                    TLS.with_severity(S::Medium)
                                        .at(suite, format!("{name} is an insecure cipher suite")),
                                );
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        "net/http.Server" => {
            let timeout = fields
                .iter()
                .any(|(k, _)| k == "ReadHeaderTimeout" || k == "ReadTimeout");
            if !timeout {
                out.push(SLOWLORIS.at(node, "http.Server without ReadHeaderTimeout lets slow clients hold connections open (Slowloris)"));
            }
        }
        _ => {}
    }
}

/// The Go nodes that can contain imports and constant declarations.
fn is_declaration_level(kind: &str) -> bool {
    matches!(
        kind,
        "source_file" | "block" | "statement_list" | "import_spec_list"
    ) || kind.ends_with("_declaration")
        || kind.ends_with("_statement")
        || kind.ends_with("_case")
}
