//! The bash check: every command in the script, wherever it sits (pipelines, substitutions,
//! functions, loops), is resolved through wrappers (`env`, `command`, `exec`, `timeout`,
//! `xargs`, `busybox`, `find -exec`, paths, quotes) to the program it runs, and compared with
//! the list; `sh -c '...'` is checked as bash in its turn. What cannot be resolved is refused.

use tree_sitter::Node;

use super::{CheckList, Hit, syntax_hit};
use crate::tree::{self, Grammar, line, named_children, text, walk};

const SHELLS: &[&str] = &[
    "sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
];
const INTERPRETERS: &[(&str, &[&str])] = &[
    ("python", &["-c"]),
    ("perl", &["-e", "-E"]),
    ("ruby", &["-e"]),
    ("node", &["-e", "--eval", "-p", "--print"]),
    ("nodejs", &["-e", "--eval", "-p", "--print"]),
    ("php", &["-r"]),
    ("lua", &["-e"]),
    ("awk", &[]),
];
/// Programs that run the command given in their arguments, with how many option words they
/// take before it.
const WRAPPERS: &[&str] = &[
    "command", "builtin", "exec", "env", "nohup", "time", "nice", "timeout", "stdbuf", "xargs",
    "setsid", "unbuffer", "busybox", "chroot", "flock", "ionice", "taskset", "watch", "strace",
    "ltrace", "script",
];
const MAX_NESTING: u32 = 8;

pub(super) fn check(code: &str, list: &CheckList, nesting: u32) -> Vec<Hit> {
    let mut hits = Vec::new();
    let src = code.as_bytes();
    let Some(parsed) = tree::parse(Grammar::Bash, src) else {
        return vec![syntax_hit(1, "bash")];
    };
    let root = parsed.root_node();
    if let Some(error) = tree::first_error(root) {
        hits.push(syntax_hit(line(error), "bash"));
    }
    network_paths(code, list, &mut hits);
    let deep = walk(root, |node, place| {
        if node.kind() == "command" {
            command(node, place.ancestors, src, list, nesting, &mut hits);
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

fn hit(list: &CheckList, api: &str, line: u32, detail: &str) -> Option<Hit> {
    let entry = list.bash_entry(api)?;
    Some(Hit {
        line,
        api: api.to_owned(),
        why: if detail.is_empty() {
            entry.why.clone()
        } else {
            format!("{}: {detail}", entry.why)
        },
    })
}

/// `/dev/tcp/host/port` can be spelled with quotes and escapes; the check reads the text with
/// them removed.
fn network_paths(code: &str, list: &CheckList, hits: &mut Vec<Hit>) {
    for (index, raw_line) in code.lines().enumerate() {
        let plain: String = raw_line
            .chars()
            .filter(|c| !matches!(c, '"' | '\'' | '\\'))
            .collect();
        let number = u32::try_from(index + 1).unwrap_or(u32::MAX);
        for api in ["/dev/tcp", "/dev/udp"] {
            if plain.contains(&format!("{api}/")) {
                hits.extend(hit(list, api, number, ""));
            }
        }
    }
}

/// The literal value of a word, or `None` when it depends on the run (expansions,
/// substitutions).
fn literal(node: Node<'_>, src: &[u8]) -> Option<String> {
    match node.kind() {
        "word" | "number" => Some(unescape(text(node, src))),
        "raw_string" => Some(text(node, src).trim_matches('\'').to_owned()),
        "string" => {
            let mut out = String::new();
            for child in named_children(node) {
                match child.kind() {
                    "string_content" => out.push_str(&unescape(text(child, src))),
                    _ => return None,
                }
            }
            Some(out)
        }
        "concatenation" => {
            let mut out = String::new();
            for child in named_children(node) {
                out.push_str(&literal(child, src)?);
            }
            Some(out)
        }
        "command_name" => literal(named_children(node).into_iter().next()?, src),
        "ansi_c_string" => {
            let body = text(node, src);
            let body = body.strip_prefix("$'")?.strip_suffix('\'')?;
            (!body.contains('\\')).then(|| body.to_owned())
        }
        _ => None,
    }
}

fn unescape(word: &str) -> String {
    let mut out = String::with_capacity(word.len());
    let mut chars = word.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(next) = chars.next()
                && next != '\n'
            {
                out.push(next);
            }
        } else {
            out.push(c);
        }
    }
    out
}

fn basename(name: &str) -> &str {
    name.rsplit('/').next().unwrap_or(name)
}

/// `python3.11` is `python`; `bash5` is `bash`.
fn family(name: &str) -> &str {
    name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.')
}

fn command(
    node: Node<'_>,
    ancestors: &[Node<'_>],
    src: &[u8],
    list: &CheckList,
    nesting: u32,
    hits: &mut Vec<Hit>,
) {
    let at = line(node);
    let Some(name_node) = node.child_by_field_name("name") else {
        return;
    };
    let mut cursor = node.walk();
    let arguments: Vec<Node<'_>> = node
        .children_by_field_name("argument", &mut cursor)
        .collect();
    let mut words: Vec<Option<String>> = Vec::with_capacity(arguments.len() + 1);
    words.push(literal(name_node, src));
    words.extend(arguments.iter().map(|a| literal(*a, src)));

    let mut index = 0;
    loop {
        let Some(word) = words.get(index) else {
            return;
        };
        let Some(name) = word.as_deref() else {
            hits.extend(hit(
                list,
                "dynamic-command",
                at,
                &format!("`{}`", text(node, src).chars().take(60).collect::<String>()),
            ));
            return;
        };
        let name = basename(name);
        if let Some(found) = hit(list, name, at, &format!("`{name}`")) {
            hits.push(found);
            return;
        }
        let rest = &words[index + 1..];
        match name {
            "source" | "." => {
                let target = rest.first().cloned().flatten();
                let dynamic = match target.as_deref() {
                    None => !rest.is_empty(),
                    Some(path) => {
                        path == "-"
                            || path.starts_with("/dev/stdin")
                            || path.starts_with("/dev/fd/")
                            || path.starts_with("/proc/self/fd/")
                            || path.contains("://")
                    }
                };
                if dynamic {
                    hits.extend(hit(list, "source-stdin", at, &format!("`{name}`")));
                }
                return;
            }
            "find" => {
                // `find . -exec CMD ... ;` runs CMD.
                match rest.iter().position(|w| {
                    matches!(w.as_deref(), Some("-exec" | "-execdir" | "-ok" | "-okdir"))
                }) {
                    Some(offset) => index += offset + 2,
                    None => return,
                }
                continue;
            }
            _ if WRAPPERS.contains(&name) => {
                // Skip the wrapper's options and their values (`timeout -s KILL 5`,
                // `env -u X A=b`) to reach the command it runs.
                let mut next = index + 1;
                while let Some(Some(word)) = words.get(next) {
                    let numeric = word.chars().next().is_some_and(|c| c.is_ascii_digit());
                    let signal = matches!(word.as_str(), "KILL" | "TERM" | "INT" | "HUP");
                    if word.starts_with('-') || word.contains('=') || numeric || signal {
                        next += 1;
                    } else {
                        break;
                    }
                }
                if next >= words.len() {
                    return;
                }
                index = next;
                continue;
            }
            _ => {}
        }
        let family = family(name);
        if SHELLS.contains(&family) {
            shell(node, ancestors, rest, list, nesting, at, hits);
        } else if let Some((_, flags)) = INTERPRETERS.iter().find(|(n, _)| *n == family) {
            let inline = rest.iter().flatten().find(|w| {
                flags.contains(&w.as_str()) || (family == "awk" && w.contains("system("))
            });
            if let Some(flag) = inline {
                hits.extend(hit(list, "inline-code", at, &format!("`{name} {flag}`")));
            } else if reads_stdin(node, ancestors, rest) {
                hits.extend(hit(list, "pipe-to-interpreter", at, &format!("`{name}`")));
            }
        }
        return;
    }
}

fn shell(
    node: Node<'_>,
    ancestors: &[Node<'_>],
    rest: &[Option<String>],
    list: &CheckList,
    nesting: u32,
    at: u32,
    hits: &mut Vec<Hit>,
) {
    let dash_c = rest.iter().position(|w| {
        w.as_deref()
            .is_some_and(|w| w.starts_with('-') && !w.starts_with("--") && w.contains('c'))
    });
    if let Some(position) = dash_c {
        match rest.get(position + 1) {
            Some(Some(script)) if nesting < MAX_NESTING => {
                for mut inner in check(script, list, nesting + 1) {
                    inner.line = at;
                    inner.why = format!("{} (inside `sh -c`)", inner.why);
                    hits.push(inner);
                }
            }
            _ => hits.extend(hit(
                list,
                "inline-code",
                at,
                "a shell's `-c` script is built at run time",
            )),
        }
    } else if reads_stdin(node, ancestors, rest) {
        hits.extend(hit(
            list,
            "pipe-to-interpreter",
            at,
            "a shell reading its standard input",
        ));
    }
}

/// An interpreter with no script argument reads its program from standard input: from a pipe,
/// a here-document, a here-string, or a redirection.
fn reads_stdin(node: Node<'_>, ancestors: &[Node<'_>], rest: &[Option<String>]) -> bool {
    let script = rest.iter().any(|w| match w.as_deref() {
        Some("-" | "-s" | "/dev/stdin") | None => false,
        Some(w) => !w.starts_with('-'),
    });
    if script {
        return false;
    }
    if redirects_stdin(node) {
        return true;
    }
    let mut child = node;
    for &parent in ancestors.iter().rev() {
        match parent.kind() {
            "pipeline" => return parent.named_child(0).map(|n| n.id()) != Some(child.id()),
            "redirected_statement" => {
                if redirects_stdin(parent) {
                    return true;
                }
            }
            _ => return false,
        }
        child = parent;
    }
    false
}

fn redirects_stdin(node: Node<'_>) -> bool {
    named_children(node).iter().any(|r| {
        matches!(r.kind(), "heredoc_redirect" | "herestring_redirect")
            || (r.kind() == "file_redirect" && r.child(0).is_some_and(|op| op.kind() == "<"))
    })
}
