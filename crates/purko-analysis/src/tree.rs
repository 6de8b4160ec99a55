//! Parsing with tree-sitter, one parser per grammar and thread, and the iterative walks every
//! rule uses: no recursion over the syntax tree, so deeply nested input cannot overflow the stack.

use std::cell::RefCell;

use tree_sitter::{Node, Parser, Tree};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Grammar {
    Python,
    Go,
    Bash,
}

thread_local! {
    static PARSERS: RefCell<[Option<Parser>; 3]> = const { RefCell::new([None, None, None]) };
}

/// Parses `source`; `None` only when tree-sitter gives up (it does not on any input we pass).
///
/// tree-sitter-bash 0.25's scanner hands code points to C's `isdigit`, which reads outside its
/// table for any above 255 (and can crash the process: `{` before such a character does). Bash
/// is therefore parsed from a copy whose bytes outside ASCII are letters: every byte offset is
/// the same, so nodes still name their text in `source`, and bash itself splits words on ASCII
/// blanks only, so a non-ASCII character is part of a word as it is to the shell.
pub(crate) fn parse(grammar: Grammar, source: &[u8]) -> Option<Tree> {
    let ascii: Vec<u8>;
    let source = if grammar == Grammar::Bash && !source.is_ascii() {
        ascii = source
            .iter()
            .map(|&b| if b.is_ascii() { b } else { b'a' })
            .collect();
        &ascii
    } else {
        source
    };
    PARSERS.with(|cell| {
        let mut parsers = cell.borrow_mut();
        let slot = &mut parsers[grammar as usize];
        let parser = slot.get_or_insert_with(|| new_parser(grammar));
        parser.parse(source, None)
    })
}

#[expect(
    clippy::expect_used,
    reason = "the grammar crates are built for this tree-sitter ABI; a mismatch is a build error in all but name"
)]
fn new_parser(grammar: Grammar) -> Parser {
    let language: tree_sitter::Language = match grammar {
        Grammar::Python => tree_sitter_python::LANGUAGE.into(),
        Grammar::Go => tree_sitter_go::LANGUAGE.into(),
        Grammar::Bash => tree_sitter_bash::LANGUAGE.into(),
    };
    let mut parser = Parser::new();
    parser
        .set_language(&language)
        .expect("grammar and tree-sitter ABI match");
    parser
}

/// The node's text; sources are valid UTF-8 by the time they are parsed.
pub(crate) fn text<'a>(node: Node<'_>, source: &'a [u8]) -> &'a str {
    node.utf8_text(source).unwrap_or("")
}

/// The node's 1-based line.
pub(crate) fn line(node: Node<'_>) -> u32 {
    u32::try_from(node.start_position().row)
        .unwrap_or(u32::MAX - 1)
        .saturating_add(1)
}

/// The node's 1-based column, in bytes.
pub(crate) fn column(node: Node<'_>) -> u32 {
    u32::try_from(node.start_position().column)
        .unwrap_or(u32::MAX - 1)
        .saturating_add(1)
}

/// Every node under `root` (itself included) in document order.
pub(crate) fn descendants(root: Node<'_>) -> Descendants<'_> {
    Descendants {
        cursor: root.walk(),
        done: false,
        root_id: root.id(),
    }
}

pub(crate) struct Descendants<'tree> {
    cursor: tree_sitter::TreeCursor<'tree>,
    done: bool,
    root_id: usize,
}

impl<'tree> Iterator for Descendants<'tree> {
    type Item = Node<'tree>;

    fn next(&mut self) -> Option<Node<'tree>> {
        if self.done {
            return None;
        }
        let node = self.cursor.node();
        if !self.cursor.goto_first_child() {
            loop {
                if self.cursor.node().id() == self.root_id {
                    self.done = true;
                    break;
                }
                if self.cursor.goto_next_sibling() {
                    break;
                }
                if !self.cursor.goto_parent() {
                    self.done = true;
                    break;
                }
            }
        }
        Some(node)
    }
}

/// The first syntax error under `root`, if any: an `ERROR` node or a missing token.
pub(crate) fn first_error(root: Node<'_>) -> Option<Node<'_>> {
    if !root.has_error() {
        return None;
    }
    descendants(root).find(|n| n.is_error() || n.is_missing())
}

/// The named children of `node`, collected (tree-sitter's iterator borrows a cursor).
pub(crate) fn named_children(node: Node<'_>) -> Vec<Node<'_>> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).collect()
}

/// Nesting deeper than this is refused: Python's own parser stops near 200 levels and real Go
/// code stays far below. Rules see no node below it, which keeps their ancestor lists short.
pub(crate) const MAX_NESTING: usize = 2000;

/// Where a visited node sits: its ancestors, root first, and the field it fills in its parent.
/// Tree-sitter's `Node::parent` searches down from the root on every call; the walk keeps the
/// ancestors instead, so asking costs nothing.
pub(crate) struct Place<'a, 'tree> {
    pub ancestors: &'a [Node<'tree>],
    pub field: Option<&'a str>,
}

impl<'tree> Place<'_, 'tree> {
    pub(crate) fn parent(&self) -> Option<Node<'tree>> {
        self.ancestors.last().copied()
    }

    pub(crate) fn grandparent(&self) -> Option<Node<'tree>> {
        self.ancestors
            .len()
            .checked_sub(2)
            .map(|i| self.ancestors[i])
    }
}

/// Visits every node under `root` in document order, with its place, down to
/// [`MAX_NESTING`] levels; returns the first node below that, whose subtree was not visited.
pub(crate) fn walk<'tree>(
    root: Node<'tree>,
    mut visit: impl FnMut(Node<'tree>, &Place<'_, 'tree>),
) -> Option<Node<'tree>> {
    let mut cursor = root.walk();
    let mut stack: Vec<Node<'tree>> = Vec::new();
    let mut too_deep = None;
    loop {
        let node = cursor.node();
        let deep = stack.len() >= MAX_NESTING;
        if deep {
            too_deep.get_or_insert(node);
        } else {
            visit(
                node,
                &Place {
                    ancestors: &stack,
                    field: cursor.field_name(),
                },
            );
        }
        if !deep && cursor.goto_first_child() {
            stack.push(node);
            continue;
        }
        loop {
            if stack.is_empty() {
                return too_deep;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return too_deep;
            }
            stack.pop();
        }
    }
}

/// Visits `root` and the nodes under it, going into a node's children only when `descend`
/// says so: a pass that looks for statements need not walk every expression.
pub(crate) fn pruned<'tree>(
    root: Node<'tree>,
    descend: impl Fn(&str) -> bool,
    mut visit: impl FnMut(Node<'tree>),
) {
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        visit(node);
        if descend(node.kind()) && cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.node().id() == root.id() {
                return;
            }
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return;
            }
        }
    }
}
