//! The python check: every name, attribute chain, import and dynamic lookup is resolved to a
//! dotted path (see `pynames`) and compared with the list. References count, not only calls:
//! `map(os.system, cmds)` runs `os.system` without a call in sight.

use tree_sitter::Node;

use super::{CheckList, Hit, syntax_hit};
use crate::pynames::{Bare, Names};
use crate::source::{coding_declaration, normalise_encoding};
use crate::tree::{self, Grammar, Place, line, text, walk};

/// Attributes that lead from any object to code or builtins (`().__class__.__base__
/// .__subclasses__()`): refused wherever they appear.
const ESCAPES: &[&str] = &[
    "__subclasses__",
    "__globals__",
    "__builtins__",
    "__code__",
    "__closure__",
    "f_globals",
    "f_builtins",
    "gi_frame",
    "tb_frame",
];

pub(super) fn check(code: &str, list: &CheckList) -> Vec<Hit> {
    let mut hits = Vec::new();
    if let Some(encoding) = coding_declaration(code.as_bytes())
        && normalise_encoding(&encoding) != "utf-8"
    {
        {
            hits.push(Hit {
                line: 1,
                api: "source-encoding".to_owned(),
                why: format!(
                    "the code declares the source encoding {encoding}, under which Python reads other code than this check did; only UTF-8 runs"
                ),
            });
        }
    }
    let src = code.as_bytes();
    let Some(parsed) = tree::parse(Grammar::Python, src) else {
        hits.push(syntax_hit(1, "Python"));
        return hits;
    };
    let root = parsed.root_node();
    if let Some(error) = tree::first_error(root) {
        hits.push(syntax_hit(line(error), "Python"));
    }
    let names = Names::collect(root, src, Bare::BuiltinOnly);
    for (path, at, _) in &names.imports {
        if let Some(entry) = list.python_entry(path) {
            hits.push(Hit {
                line: *at,
                api: path.clone(),
                why: format!("imports {path}, which {}", entry.why),
            });
        }
    }
    for (module, at) in &names.star_imports {
        let prefix = format!("{module}.");
        if let Some(entry) = list
            .python
            .iter()
            .find(|e| e.api.starts_with(&prefix) || e.api == *module)
        {
            hits.push(Hit {
                line: *at,
                api: entry.api.clone(),
                why: format!(
                    "`from {module} import *` brings {} into scope under its bare name: {}",
                    entry.api, entry.why
                ),
            });
        }
    }
    let deep = walk(root, |node, place| {
        if !is_reference(node, place) {
            return;
        }
        if node.kind() == "attribute"
            && let Some(attribute) = node.child_by_field_name("attribute")
        {
            {
                let name = text(attribute, src);
                if ESCAPES.contains(&name) {
                    hits.push(Hit {
                        line: line(node),
                        api: name.to_owned(),
                        why: format!(
                            "`{name}` reaches interpreter internals from any object, a known way out of a sandbox"
                        ),
                    });
                }
            }
        }
        if !is_outermost(place) {
            return;
        }
        let Some(path) = names.qualify(node, src) else {
            return;
        };
        if let Some(hit) = judge(&path, node, src, list) {
            hits.push(hit);
        }
    });
    if let Some(deep) = deep {
        hits.push(Hit {
            line: line(deep),
            api: "nesting".to_owned(),
            why: format!(
                "the code nests deeper than {} levels, so it was not checked",
                tree::MAX_NESTING
            ),
        });
    }
    hits
}

fn judge(path: &str, node: Node<'_>, src: &[u8], list: &CheckList) -> Option<Hit> {
    // Built only for a hit: most references are allowed.
    let written = || -> String { text(node, src).chars().take(60).collect() };
    if let Some(base) = path.strip_suffix('?') {
        let base = base.trim_end_matches('.');
        let reachable = base.is_empty()
            || base == "builtins"
            || list
                .python
                .iter()
                .any(|e| e.api == base || e.api.starts_with(&format!("{base}.")));
        return reachable.then(|| Hit {
            line: line(node),
            api: if base.is_empty() {
                "dynamic-lookup".to_owned()
            } else {
                format!("{base}.?")
            },
            why: format!(
                "`{}` looks a name up at run time where it could reach a refused api; the check cannot tell which",
                written()
            ),
        });
    }
    let entry = list.python_entry(path)?;
    let written = written();
    let via = if written == path {
        String::new()
    } else {
        format!(" (reached as `{written}`)")
    };
    Some(Hit {
        line: line(node),
        api: path.to_owned(),
        why: format!("{}{via}", entry.why),
    })
}

/// Expression nodes that can name something: identifiers outside definitions, attribute
/// chains, calls and subscripts.
fn is_reference(node: Node<'_>, place: &Place<'_, '_>) -> bool {
    match node.kind() {
        "attribute" | "call" | "subscript" => true,
        "identifier" => {
            let Some(parent) = place.parent() else {
                return true;
            };
            let excluded = match parent.kind() {
                "aliased_import" | "dotted_name" | "parameters" | "lambda_parameters" => true,
                "keyword_argument"
                | "function_definition"
                | "class_definition"
                | "default_parameter"
                | "typed_default_parameter" => place.field == Some("name"),
                "attribute" => place.field == Some("attribute"),
                "typed_parameter" => matches!(place.field, None | Some("name")),
                _ => false,
            };
            !excluded
        }
        _ => false,
    }
}

/// Only the longest chain is resolved: in `os.system`, not `os` on its own.
fn is_outermost(place: &Place<'_, '_>) -> bool {
    !(place.parent().is_some_and(|p| p.kind() == "attribute") && place.field == Some("object"))
}
