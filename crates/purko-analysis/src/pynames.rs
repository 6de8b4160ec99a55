//! What a Python name refers to: imports (`import os as o`, `from os import system as s`),
//! simple aliases (`e = eval`), and the ways to reach a module or builtin dynamically
//! (`__import__("os")`, `importlib.import_module("os")`, `getattr(builtins, "eval")`,
//! `__builtins__["eval"]`, `globals()["__builtins__"]`, `sys.modules["os"]`,
//! `os.__dict__["system"]`). Names are resolved to dotted paths; builtins lose the `builtins.`
//! prefix, so `builtins.eval`, `__builtins__.eval` and `eval` are all `eval`. A lookup whose key
//! is computed at run time ends in `.?` (`getattr(os, name)` is `os.?`).

use rustc_hash::FxHashMap;
use tree_sitter::Node;

use crate::tree::{named_children, text};

/// Builtins through which code reaches other code; a plain assignment of one is an alias.
const DYNAMIC_BUILTINS: &[&str] = &[
    "eval",
    "exec",
    "compile",
    "__import__",
    "getattr",
    "globals",
    "vars",
    "locals",
    "open",
    "breakpoint",
];

/// The other builtins a bare name resolves to without an import.
const OTHER_BUILTINS: &[&str] = &["input", "object", "type", "__builtins__"];

/// Whether a bare name is a builtin (it resolves without an import).
fn is_builtin(name: &str) -> bool {
    DYNAMIC_BUILTINS.contains(&name) || OTHER_BUILTINS.contains(&name)
}

/// Marks the dictionary `globals()`, `locals()` and `vars()` return.
const NAMESPACE: &str = "<namespace>";
const MAX_DEPTH: usize = 48;

/// What a bare name that nothing imports refers to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Bare {
    /// Itself, as Bandit reads code: a snippet handed to the analyzer often omits its imports.
    #[default]
    Itself,
    /// Nothing, unless it is a builtin: for the check, where a local variable named `code` or
    /// `socket` must not be taken for the module (and an unimported module fails to run).
    BuiltinOnly,
}

/// Local name → dotted path, from the whole module (flow-insensitive: a name bound anywhere
/// counts everywhere, which errs on the side of resolving).
#[derive(Debug, Default)]
pub(crate) struct Names {
    map: FxHashMap<String, String>,
    /// `from m import *`: modules whose names are all in scope.
    pub star_imports: Vec<(String, u32)>,
    /// Every import: (dotted path bound, the node, as written).
    pub imports: Vec<(String, u32, u32)>,
    bare: Bare,
}

impl Names {
    pub(crate) fn collect(root: Node<'_>, src: &[u8], bare: Bare) -> Self {
        let mut names = Self {
            bare,
            ..Self::default()
        };
        let mut assignments = Vec::new();
        // Imports and assignments are statements: expressions are not walked.
        crate::tree::pruned(root, is_statement_level, |node| match node.kind() {
            "import_statement" => names.import(node, src, None),
            "import_from_statement" => {
                let module = node
                    .child_by_field_name("module_name")
                    .map(|m| text(m, src).to_owned());
                if let Some(module) = module {
                    if named_children(node)
                        .iter()
                        .any(|c| c.kind() == "wildcard_import")
                    {
                        names
                            .star_imports
                            .push((module.clone(), crate::tree::line(node)));
                    }
                    names.import(node, src, Some(&module));
                }
            }
            "assignment" => assignments.push(node),
            _ => {}
        });
        // Two rounds resolve aliases of aliases in either order.
        for _ in 0..2 {
            for &assignment in &assignments {
                names.alias(assignment, src);
            }
        }
        names
    }

    fn import(&mut self, node: Node<'_>, src: &[u8], from: Option<&str>) {
        let mut cursor = node.walk();
        for child in node.children_by_field_name("name", &mut cursor) {
            let (path, local) = match child.kind() {
                "dotted_name" => {
                    let path = text(child, src).to_owned();
                    let local = match from {
                        Some(_) => path.clone(),
                        // `import a.b` binds `a`, to `a`.
                        None => path.split('.').next().unwrap_or_default().to_owned(),
                    };
                    (path, local)
                }
                "aliased_import" => {
                    let (Some(name), Some(alias)) = (
                        child.child_by_field_name("name"),
                        child.child_by_field_name("alias"),
                    ) else {
                        continue;
                    };
                    (text(name, src).to_owned(), text(alias, src).to_owned())
                }
                _ => continue,
            };
            let full = match from {
                Some(module) if !module.starts_with('.') => format!("{module}.{path}"),
                Some(_) => continue,
                None => path.clone(),
            };
            let full = normalise(full);
            self.imports.push((
                full.clone(),
                crate::tree::line(child),
                crate::tree::column(child),
            ));
            // `import a.b` binds `a` to itself; only aliases and from-imports rename.
            if from.is_some() || child.kind() == "aliased_import" {
                self.map.insert(local, full);
            }
        }
    }

    fn alias(&mut self, assignment: Node<'_>, src: &[u8]) {
        let (Some(left), Some(right)) = (
            assignment.child_by_field_name("left"),
            assignment.child_by_field_name("right"),
        ) else {
            return;
        };
        let pairs: Vec<(Node<'_>, Node<'_>)> = match (left.kind(), right.kind()) {
            ("identifier", _) => vec![(left, right)],
            ("pattern_list" | "tuple_pattern", "expression_list" | "tuple") => named_children(left)
                .into_iter()
                .zip(named_children(right))
                .collect(),
            _ => return,
        };
        for (target, value) in pairs {
            if target.kind() != "identifier" {
                continue;
            }
            let Some(path) = self.qualify(value, src) else {
                continue;
            };
            let local = text(target, src);
            if path == local {
                continue;
            }
            let root = path.split('.').next().unwrap_or_default();
            let known = self.map.values().any(|v| v.split('.').next() == Some(root))
                || self
                    .imports
                    .iter()
                    .any(|(p, _, _)| p.split('.').next() == Some(root))
                || DYNAMIC_BUILTINS.contains(&root)
                || root == "builtins"
                || root == "?"
                // `o = __import__("os")`: what a dynamic import returns is known too.
                || value.kind() == "call";
            if known {
                self.map.insert(local.to_owned(), path);
            }
        }
    }

    /// The dotted path an expression refers to, if it is a name, an attribute chain or one of
    /// the dynamic lookups this module knows.
    pub(crate) fn qualify(&self, node: Node<'_>, src: &[u8]) -> Option<String> {
        self.qualify_at(node, src, 0)
    }

    fn qualify_at(&self, node: Node<'_>, src: &[u8], depth: usize) -> Option<String> {
        if depth > MAX_DEPTH {
            return None;
        }
        match node.kind() {
            "identifier" => {
                let name = text(node, src);
                if let Some(path) = self.map.get(name) {
                    return Some(path.clone());
                }
                // A bare name is a module only when imported (`import os`), and otherwise one
                // of the builtins that reach code; a local variable named `code` or `socket`
                // is neither.
                let known = self.bare == Bare::Itself
                    || is_builtin(name)
                    || self
                        .imports
                        .iter()
                        .any(|(path, _, _)| path.split('.').next() == Some(name));
                known.then(|| normalise(name.to_owned()))
            }
            "attribute" => {
                let object =
                    self.qualify_at(node.child_by_field_name("object")?, src, depth + 1)?;
                let attribute = text(node.child_by_field_name("attribute")?, src);
                Some(join(&object, attribute))
            }
            "parenthesized_expression" => {
                let inner = named_children(node)
                    .into_iter()
                    .find(|c| c.kind() != "comment")?;
                self.qualify_at(inner, src, depth + 1)
            }
            "call" => self.qualify_call(node, src, depth),
            "subscript" => {
                let value = self.qualify_at(node.child_by_field_name("value")?, src, depth + 1)?;
                let key = node.child_by_field_name("subscript")?;
                let key = string_literal(key, src);
                let key = key.as_deref().unwrap_or("?");
                if value == NAMESPACE {
                    Some(normalise(key.to_owned()))
                } else if let Some(object) = value.strip_suffix(".__dict__") {
                    Some(join(object, key))
                } else if value == "builtins" || value == "sys.modules" {
                    Some(normalise(key.to_owned()))
                } else {
                    None
                }
            }
            _ => None,
        }
    }

    fn qualify_call(&self, node: Node<'_>, src: &[u8], depth: usize) -> Option<String> {
        let function = self.qualify_at(node.child_by_field_name("function")?, src, depth + 1)?;
        let arguments = node.child_by_field_name("arguments")?;
        let args: Vec<Node<'_>> = named_children(arguments)
            .into_iter()
            .filter(|a| a.kind() != "comment")
            .collect();
        match function.as_str() {
            "__import__" | "importlib.__import__" => {
                let module = args.first().and_then(|a| string_literal(*a, src));
                Some(module.map_or_else(
                    || "?".to_owned(),
                    |m| m.split('.').next().unwrap_or_default().to_owned(),
                ))
            }
            "importlib.import_module" => Some(
                args.first()
                    .and_then(|a| string_literal(*a, src))
                    .unwrap_or_else(|| "?".to_owned()),
            ),
            _ if function.ends_with(".__getattribute__") && args.len() == 1 => {
                let object = function
                    .strip_suffix(".__getattribute__")
                    .unwrap_or_default();
                let name = string_literal(args[0], src);
                Some(join(object, name.as_deref().unwrap_or("?")))
            }
            "getattr" | "object.__getattribute__" | "type.__getattribute__" => {
                let object = self.qualify_at(*args.first()?, src, depth + 1)?;
                let name = args.get(1).and_then(|a| string_literal(*a, src));
                Some(join(&object, name.as_deref().unwrap_or("?")))
            }
            "globals" | "locals" | "vars" if args.is_empty() => Some(NAMESPACE.to_owned()),
            "vars" => {
                let object = self.qualify_at(*args.first()?, src, depth + 1)?;
                Some(format!("{object}.__dict__"))
            }
            _ => None,
        }
    }
}

fn join(object: &str, attribute: &str) -> String {
    if object == NAMESPACE {
        return normalise(attribute.to_owned());
    }
    normalise(format!("{object}.{attribute}"))
}

/// `__builtins__` is `builtins`; `builtins.x` is `x`.
fn normalise(path: String) -> String {
    let path = match path.strip_prefix("__builtins__") {
        Some(rest) if rest.is_empty() || rest.starts_with('.') => format!("builtins{rest}"),
        _ => path,
    };
    match path.strip_prefix("builtins.") {
        Some(rest) if !rest.starts_with("__dict__") => rest.to_owned(),
        _ => path,
    }
}

/// The value of a plain string literal (no interpolation), or `None`.
pub(crate) fn string_literal(node: Node<'_>, src: &[u8]) -> Option<String> {
    match node.kind() {
        "string" => {
            let mut out = String::new();
            let mut raw = false;
            for child in named_children(node) {
                match child.kind() {
                    "string_start" => {
                        let prefix = text(child, src).to_ascii_lowercase();
                        if prefix.contains('f') || prefix.contains('b') {
                            return None;
                        }
                        raw = prefix.contains('r');
                    }
                    "string_content" if raw => out.push_str(text(child, src)),
                    "string_content" => out.push_str(&unescape(text(child, src))?),
                    "string_end" => {}
                    _ => return None,
                }
            }
            Some(out)
        }
        "concatenated_string" => {
            let mut out = String::new();
            for child in named_children(node) {
                out.push_str(&string_literal(child, src)?);
            }
            Some(out)
        }
        "parenthesized_expression" => {
            // Iterative: `((((...))))` nests as deep as the input likes.
            let mut inner = node;
            while inner.kind() == "parenthesized_expression" {
                inner = named_children(inner).into_iter().next()?;
            }
            string_literal(inner, src)
        }
        _ => None,
    }
}

/// Python's string escapes, so `"\x65val"` is `eval`; `None` for one it cannot decode.
fn unescape(raw: &str) -> Option<String> {
    if !raw.contains('\\') {
        return Some(raw.to_owned());
    }
    let mut out = String::with_capacity(raw.len());
    let mut chars = raw.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = chars.next()?;
        match escaped {
            '\n' => {}
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            '0'..='7' => {
                let mut value = escaped.to_digit(8)?;
                for _ in 0..2 {
                    match chars.peek().and_then(|d| d.to_digit(8)) {
                        Some(d) => {
                            value = value * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(char::from_u32(value)?);
            }
            'x' | 'u' | 'U' => {
                let width = match escaped {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let digits: String = (0..width).filter_map(|_| chars.next()).collect();
                out.push(char::from_u32(u32::from_str_radix(&digits, 16).ok()?)?);
            }
            '\\' | '\'' | '"' => out.push(escaped),
            _ => return None,
        }
    }
    Some(out)
}

/// The Python nodes that can contain statements.
fn is_statement_level(kind: &str) -> bool {
    matches!(kind, "module" | "block" | "decorated_definition")
        || kind.ends_with("_statement")
        || kind.ends_with("_definition")
        || kind.ends_with("_clause")
}
