//! Python rules: imports, calls (see `calls`), statements and literals. Every name is
//! resolved through the module's imports and aliases first, so `from os import system as s;
//! s(cmd)` is `os.system`.

mod by_name;
mod calls;
mod literals;

use rustc_hash::FxHashSet;
use tree_sitter::Node;

use crate::finding::{Confidence as C, Finding, Kind as K, Rule, Severity as S};
use crate::pynames::{Bare, Names};
use crate::tree::{named_children, text, walk};

/// What the rules share about one module.
pub(crate) struct Module<'a> {
    pub names: Names,
    pub src: &'a [u8],
    /// The top-level packages imported anywhere (`flask`, `paramiko`, `tarfile`).
    pub roots: FxHashSet<String>,
}

impl Module<'_> {
    pub(crate) fn imports(&self, root: &str) -> bool {
        self.roots.contains(root)
    }
}

/// The findings, or `Err(line)` when the code nests too deep to analyze.
pub(crate) fn rules(root: Node<'_>, src: &[u8]) -> Result<Vec<Finding>, u32> {
    let names = Names::collect(root, src, Bare::Itself);
    let roots = names
        .imports
        .iter()
        .map(|(p, _, _)| p.split('.').next().unwrap_or_default().to_owned())
        .collect();
    let module = Module { names, src, roots };
    let mut out = Vec::new();
    imports(root, &module, &mut out);
    let deep = walk(root, |node, place| match node.kind() {
        "call" => calls::call(node, &module, &mut out),
        "assert_statement" => out.push(ASSERT.at(
            node,
            "assert is removed when Python runs with -O: do not use it to enforce a check",
        )),
        "except_clause" => except(node, src, &mut out),
        "string" | "concatenated_string" => literals::string(node, place, &module, &mut out),
        "binary_operator" => literals::sql_built(node, place, &module, &mut out),
        "assignment" => literals::assignment(node, &module, &mut out),
        "default_parameter" | "typed_default_parameter" => {
            literals::default_parameter(node, &module, &mut out);
        }
        "comparison_operator" => literals::comparison(node, &module, &mut out),
        "pair" => literals::pair(node, &module, &mut out),
        "attribute" | "identifier" => literals::reference(node, place, &module, &mut out),
        _ => {}
    });
    match deep {
        Some(node) => Err(crate::tree::line(node)),
        None => Ok(out),
    }
}

const ASSERT: Rule = Rule::new("B101", K::AssertUsed, S::Low, C::High, 703);
const BARE_EXCEPT: Rule = Rule::new("PK110", K::BareExcept, S::Low, C::High, 396);
const TRY_EXCEPT_PASS: Rule = Rule::new("B110", K::TryExceptPass, S::Low, C::High, 703);
const TRY_EXCEPT_CONTINUE: Rule = Rule::new("B112", K::TryExceptPass, S::Low, C::High, 703);

fn except(node: Node<'_>, src: &[u8], out: &mut Vec<Finding>) {
    let children = named_children(node);
    let body = children.iter().find(|c| c.kind() == "block");
    let caught = children
        .iter()
        .find(|c| c.kind() != "block" && c.kind() != "comment");
    let broad = match caught {
        None => {
            out.push(BARE_EXCEPT.at(
                node,
                "a bare `except:` also catches SystemExit and KeyboardInterrupt: name the exceptions",
            ));
            true
        }
        Some(caught) => {
            let name = text(*caught, src);
            let name = name.split_whitespace().next().unwrap_or(name);
            matches!(name, "Exception" | "BaseException")
        }
    };
    let Some(body) = body else { return };
    let statements: Vec<Node<'_>> = named_children(*body)
        .into_iter()
        .filter(|s| s.kind() != "comment")
        .collect();
    if !broad || statements.len() != 1 {
        return;
    }
    match statements[0].kind() {
        "pass_statement" => out.push(TRY_EXCEPT_PASS.at(
            node,
            "an exception is caught and ignored (`except: pass`): errors vanish without a trace",
        )),
        "continue_statement" => out.push(TRY_EXCEPT_CONTINUE.at(
            node,
            "an exception is caught and ignored (`except: continue`): errors vanish without a trace",
        )),
        _ => {}
    }
}

/// Bandit's B4xx: imports of modules whose mere use deserves a look.
const IMPORTS: &[(&str, Rule, &str)] = &[
    (
        "telnetlib",
        Rule::new("B401", K::Network, S::High, C::High, 319),
        "telnet sends everything, passwords included, in clear text",
    ),
    (
        "ftplib",
        Rule::new("B402", K::Network, S::High, C::High, 319),
        "FTP sends everything, passwords included, in clear text",
    ),
    (
        "pickle",
        Rule::new("B403", K::InsecureDeserialization, S::Low, C::High, 502),
        "unpickling data runs code chosen by whoever wrote the data",
    ),
    (
        "cPickle",
        Rule::new("B403", K::InsecureDeserialization, S::Low, C::High, 502),
        "unpickling data runs code chosen by whoever wrote the data",
    ),
    (
        "dill",
        Rule::new("B403", K::InsecureDeserialization, S::Low, C::High, 502),
        "loading dill data runs code chosen by whoever wrote the data",
    ),
    (
        "shelve",
        Rule::new("B403", K::InsecureDeserialization, S::Low, C::High, 502),
        "shelve files are pickles: opening one runs code chosen by its writer",
    ),
    (
        "subprocess",
        Rule::new("B404", K::Subprocess, S::Low, C::High, 78),
        "subprocess starts other programs: check how their arguments are built",
    ),
    (
        "xml.etree",
        Rule::new("B405", K::XmlUntrusted, S::Low, C::High, 20),
        "the standard XML parsers are open to entity expansion attacks: use defusedxml for untrusted data",
    ),
    (
        "xml.sax",
        Rule::new("B406", K::XmlUntrusted, S::Low, C::High, 20),
        "the standard XML parsers are open to entity expansion attacks: use defusedxml for untrusted data",
    ),
    (
        "xml.dom.expatbuilder",
        Rule::new("B407", K::XmlUntrusted, S::Low, C::High, 20),
        "the standard XML parsers are open to entity expansion attacks: use defusedxml for untrusted data",
    ),
    (
        "xml.dom.minidom",
        Rule::new("B408", K::XmlUntrusted, S::Low, C::High, 20),
        "the standard XML parsers are open to entity expansion attacks: use defusedxml for untrusted data",
    ),
    (
        "xml.dom.pulldom",
        Rule::new("B409", K::XmlUntrusted, S::Low, C::High, 20),
        "the standard XML parsers are open to entity expansion attacks: use defusedxml for untrusted data",
    ),
    (
        "lxml",
        Rule::new("B410", K::XmlUntrusted, S::Low, C::High, 20),
        "lxml resolves entities by default: use defusedxml.lxml for untrusted data",
    ),
    (
        "xmlrpc",
        Rule::new("B411", K::XmlUntrusted, S::High, C::High, 20),
        "xmlrpc parses XML open to entity expansion attacks: use defusedxml.xmlrpc",
    ),
    (
        "xmlrpclib",
        Rule::new("B411", K::XmlUntrusted, S::High, C::High, 20),
        "xmlrpc parses XML open to entity expansion attacks: use defusedxml.xmlrpc",
    ),
    (
        "wsgiref.handlers.CGIHandler",
        Rule::new("B412", K::Network, S::High, C::High, 284),
        "CGI handlers trust the Proxy header (httpoxy)",
    ),
    (
        "twisted.web.twcgi.CGIScript",
        Rule::new("B412", K::Network, S::High, C::High, 284),
        "CGI handlers trust the Proxy header (httpoxy)",
    ),
    (
        "Crypto",
        Rule::new("B413", K::WeakCipher, S::High, C::High, 327),
        "pyCrypto is unmaintained and has known flaws: use pyca/cryptography",
    ),
    (
        "pyghmi",
        Rule::new("B415", K::Network, S::High, C::High, 319),
        "IPMI is an insecure protocol",
    ),
];

fn imports(root: Node<'_>, module: &Module<'_>, out: &mut Vec<Finding>) {
    let _ = root;
    for (path, line, column) in &module.names.imports {
        for (prefix, rule, why) in IMPORTS {
            let matches = path == prefix
                || path
                    .strip_prefix(prefix)
                    .is_some_and(|rest| rest.starts_with('.'));
            if matches {
                out.push(Finding {
                    rule: rule.id,
                    kind: rule.kind,
                    severity: rule.severity,
                    confidence: rule.confidence,
                    line: *line,
                    column: *column,
                    message: format!("import of {path}: {why}"),
                    cwe: Some(rule.cwe),
                });
                break;
            }
        }
    }
}
