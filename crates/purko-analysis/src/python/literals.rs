//! Literals and bindings: secrets by value and by name (B105–B107), SQL built from strings
//! (B608), binding to every interface (B104), fixed temporary paths (B108), TLS settings
//! turned off.

use std::sync::LazyLock;

use regex::Regex;
use tree_sitter::Node;

use super::Module;
use crate::finding::{Confidence as C, Finding, Kind as K, Rule, Severity as S};
use crate::pynames::string_literal;
use crate::secrets::{high_entropy, value_secret};
use crate::tree::{Place, named_children, text};

const BIND_ALL: Rule = Rule::new("B104", K::Network, S::Medium, C::Medium, 605);
const TMP: Rule = Rule::new("B108", K::Tempfile, S::Medium, C::Medium, 377);
const SECRET_VALUE: Rule = Rule::new("PK101", K::HardcodedSecret, S::High, C::High, 798);
const SECRET_STRING: Rule = Rule::new("B105", K::HardcodedSecret, S::High, C::Medium, 259);
const SECRET_DEFAULT: Rule = Rule::new("B107", K::HardcodedSecret, S::High, C::Medium, 259);
const SQL: Rule = Rule::new("B608", K::SqlInjection, S::Medium, C::Medium, 89);
const BAD_TLS: Rule = Rule::new("B502", K::InsecureTls, S::High, C::High, 327);
const BAD_TLS_DEFAULT: Rule = Rule::new("B503", K::InsecureTls, S::Medium, C::Medium, 327);
const NO_HOSTNAME: Rule = Rule::new("PK601", K::InsecureTls, S::High, C::High, 295);
const CERT_NONE: Rule = Rule::new("PK602", K::InsecureTls, S::High, C::High, 295);

/// Broken protocol versions, by their last name (`ssl.PROTOCOL_SSLv2`, pyOpenSSL's
/// `SSL.SSLv2_METHOD`, however imported).
const BAD_PROTOCOLS: &[&str] = &[
    "PROTOCOL_SSLv2",
    "PROTOCOL_SSLv3",
    "PROTOCOL_TLSv1",
    "PROTOCOL_TLSv1_1",
    "SSLv2_METHOD",
    "SSLv23_METHOD",
    "SSLv3_METHOD",
    "TLSv1_METHOD",
    "TLSv1_1_METHOD",
];

static SQL_TEXT: LazyLock<Regex> = LazyLock::new(|| {
    #[expect(clippy::expect_used, reason = "a constant pattern checked by the tests")]
    Regex::new(
        r"(?is)^[\s(]*(?:select\s.*\sfrom\s|delete\s+from\s|insert\s+into\s|update\s+\S+\s+set\s|with\s+\S+\s+as\s*\()",
    )
    .expect("SQL pattern compiles")
});

/// A name match whose value also looks random is sure.
pub(super) fn secret_rule(rule: Rule, value: &str) -> Rule {
    if high_entropy(value) {
        rule.with_confidence(C::High)
    } else {
        rule
    }
}

pub(super) fn string(
    node: Node<'_>,
    place: &Place<'_, '_>,
    module: &Module<'_>,
    out: &mut Vec<Finding>,
) {
    let src = module.src;
    let parent = place.parent();
    if node.kind() == "string" && parent.is_some_and(|p| p.kind() == "concatenated_string") {
        return;
    }
    let raw = text(node, src);
    let value = string_literal(node, src);
    let scanned = value.as_deref().unwrap_or(raw);
    if let Some(what) = value_secret(scanned) {
        out.push(SECRET_VALUE.at(node, format!("{what} is written in the source")));
    }
    let bare = parent.is_some_and(|p| p.kind() == "expression_statement");
    if let Some(value) = value.as_deref()
        && !bare
    {
        if value == "0.0.0.0" || value == "::" {
            out.push(BIND_ALL.at(node, format!("{value:?} binds to every network interface")));
        }
        if ["/tmp", "/var/tmp", "/dev/shm"]
            .iter()
            .any(|t| value == *t || value.starts_with(&format!("{t}/")))
        {
            out.push(TMP.at(
                node,
                format!("{value:?} is a fixed path in a shared temporary folder: use tempfile"),
            ));
        }
    }
    // An f-string with SQL and interpolated values, or SQL text formatted with `.format`.
    let interpolated = node.kind() == "string"
        && named_children(node)
            .iter()
            .any(|c| c.kind() == "interpolation");
    let formatted = parent.is_some_and(|p| {
        p.kind() == "attribute"
            && p.child_by_field_name("attribute")
                .is_some_and(|a| text(a, src) == "format")
            && place.grandparent().is_some_and(|g| g.kind() == "call")
    });
    if (interpolated || formatted) && SQL_TEXT.is_match(&sql_text(node, src)) {
        out.push(SQL.at(
            node,
            "SQL text is built from values: pass them as query parameters",
        ));
    }
}

fn sql_text(node: Node<'_>, src: &[u8]) -> String {
    let raw = text(node, src);
    raw.trim_start_matches(|c: char| c.is_ascii_alphabetic())
        .trim_start_matches(['"', '\''])
        .to_owned()
}

/// `"SELECT ... " % values` and `"SELECT ... " + value`.
pub(super) fn sql_built(
    node: Node<'_>,
    place: &Place<'_, '_>,
    module: &Module<'_>,
    out: &mut Vec<Finding>,
) {
    let src = module.src;
    let operator = node.child_by_field_name("operator").map(|o| text(o, src));
    if !matches!(operator, Some("%" | "+")) {
        return;
    }
    // Only the outermost `+` of a chain reports.
    if place
        .parent()
        .is_some_and(|p| p.kind() == "binary_operator")
    {
        return;
    }
    let mut leftmost = node;
    while leftmost.kind() == "binary_operator" {
        match leftmost.child_by_field_name("left") {
            Some(left) => leftmost = left,
            None => return,
        }
    }
    let Some(left) = string_literal(leftmost, src) else {
        return;
    };
    let all_literal = crate::tree::descendants(node).all(|n| {
        !matches!(
            n.kind(),
            "identifier" | "call" | "attribute" | "interpolation"
        )
    });
    if !all_literal && SQL_TEXT.is_match(&left) {
        out.push(SQL.at(
            node,
            "SQL text is built from values: pass them as query parameters",
        ));
    }
}

/// The name a target binds: `x`, `obj.x`, `d["x"]`.
fn target_name<'a>(node: Node<'_>, src: &'a [u8]) -> Option<std::borrow::Cow<'a, str>> {
    match node.kind() {
        "identifier" => Some(text(node, src).into()),
        "attribute" => Some(text(node.child_by_field_name("attribute")?, src).into()),
        "subscript" => string_literal(node.child_by_field_name("subscript")?, src).map(Into::into),
        _ => None,
    }
}

fn bound_secret(rule: Rule, name: &str, value: Node<'_>, src: &[u8], out: &mut Vec<Finding>) {
    let Some(literal) = string_literal(value, src) else {
        return;
    };
    if crate::secrets::secret_binding(name, &literal) {
        out.push(
            secret_rule(rule, &literal).at(value, format!("possible hardcoded secret in `{name}`")),
        );
    }
}

pub(super) fn assignment(node: Node<'_>, module: &Module<'_>, out: &mut Vec<Finding>) {
    let src = module.src;
    let (Some(left), Some(right)) = (
        node.child_by_field_name("left"),
        node.child_by_field_name("right"),
    ) else {
        return;
    };
    let Some(name) = target_name(left, src) else {
        return;
    };
    bound_secret(SECRET_STRING, &name, right, src, out);
    if name == "check_hostname" && right.kind() == "false" {
        out.push(NO_HOSTNAME.at(
            node,
            "check_hostname = False accepts a certificate for any host name",
        ));
    }
    if name == "verify_mode"
        && module
            .names
            .qualify(right, src)
            .is_some_and(|p| p == "ssl.CERT_NONE")
    {
        out.push(CERT_NONE.at(node, "verify_mode = ssl.CERT_NONE accepts any certificate"));
    }
}

pub(super) fn default_parameter(node: Node<'_>, module: &Module<'_>, out: &mut Vec<Finding>) {
    let (Some(name), Some(value)) = (
        node.child_by_field_name("name"),
        node.child_by_field_name("value"),
    ) else {
        return;
    };
    let name = text(name, module.src);
    bound_secret(SECRET_DEFAULT, name, value, module.src, out);
}

pub(super) fn comparison(node: Node<'_>, module: &Module<'_>, out: &mut Vec<Finding>) {
    let children = named_children(node);
    if children.len() != 2 {
        return;
    }
    let operator = node.child(1).map(|o| text(o, module.src));
    if !matches!(operator, Some("==" | "!=")) {
        return;
    }
    if let Some(name) = target_name(children[0], module.src) {
        bound_secret(SECRET_STRING, &name, children[1], module.src, out);
    }
}

pub(super) fn pair(node: Node<'_>, module: &Module<'_>, out: &mut Vec<Finding>) {
    let (Some(key), Some(value)) = (
        node.child_by_field_name("key"),
        node.child_by_field_name("value"),
    ) else {
        return;
    };
    if let Some(name) = string_literal(key, module.src) {
        bound_secret(SECRET_STRING, &name, value, module.src, out);
    }
}

/// B502/B503: a broken TLS protocol version named anywhere.
pub(super) fn reference(
    node: Node<'_>,
    place: &Place<'_, '_>,
    module: &Module<'_>,
    out: &mut Vec<Finding>,
) {
    let name = match node.kind() {
        "attribute" => node.child_by_field_name("attribute"),
        _ => Some(node),
    };
    let Some(name) = name else { return };
    let last = text(name, module.src);
    if !(last.starts_with("PROTOCOL_") || last.ends_with("_METHOD")) {
        return;
    }
    if node.kind() == "identifier"
        && place
            .parent()
            .is_some_and(|p| p.kind() == "attribute" || p.kind().contains("import"))
    {
        return;
    }
    let Some(path) = module.names.qualify(node, module.src) else {
        return;
    };
    let (owner, name) = path.rsplit_once('.').unwrap_or(("", &path));
    if !(BAD_PROTOCOLS.contains(&name) && (owner == "ssl" || owner.ends_with("SSL"))) {
        return;
    }
    let default = place
        .ancestors
        .iter()
        .any(|a| matches!(a.kind(), "default_parameter" | "typed_default_parameter"));
    if default {
        out.push(BAD_TLS_DEFAULT.at(
            node,
            format!("{path} as a default is a broken protocol version: use TLS 1.2 or later"),
        ));
    } else {
        out.push(BAD_TLS.at(
            node,
            format!("{path} is a broken protocol version: use TLS 1.2 or later"),
        ));
    }
}
