//! Go calls, by import path and name.

use std::sync::LazyLock;

use regex::Regex;
use tree_sitter::Node;

use super::{File, string_value};
use crate::finding::{Confidence as C, Finding, Kind as K, Rule, Severity as S};
use crate::tree::{descendants, named_children, text};

static SQL: LazyLock<Regex> = LazyLock::new(|| {
    #[expect(clippy::expect_used, reason = "a constant pattern checked by the tests")]
    Regex::new(r"(?is)^[\s(]*(?:select\s.*\sfrom\s|delete\s+from\s|insert\s+into\s|update\s+\S+\s+set\s|with\s+\S+\s+as\s*\()")
        .expect("SQL pattern compiles")
});

pub(super) fn looks_like_sql(text: &str) -> bool {
    SQL.is_match(text)
}

const BY_NAME: &[(&[&str], Rule, &str)] = &[
    (
        &[
            "crypto/md5.New",
            "crypto/md5.Sum",
            "crypto/sha1.New",
            "crypto/sha1.Sum",
        ],
        Rule::new("G401", K::WeakHash, S::Medium, C::High, 328),
        "MD5 and SHA-1 are broken for security use",
    ),
    (
        &[
            "crypto/des.NewCipher",
            "crypto/des.NewTripleDESCipher",
            "crypto/rc4.NewCipher",
        ],
        Rule::new("G405", K::WeakCipher, S::Medium, C::High, 327),
        "DES, 3DES and RC4 are broken",
    ),
    (
        &[
            "golang.org/x/crypto/md4.New",
            "golang.org/x/crypto/ripemd160.New",
        ],
        Rule::new("G406", K::WeakHash, S::Medium, C::High, 328),
        "MD4 and RIPEMD-160 are broken or deprecated",
    ),
    (
        &["golang.org/x/crypto/ssh.InsecureIgnoreHostKey"],
        Rule::new("G106", K::InsecureTls, S::High, C::High, 322),
        "ssh.InsecureIgnoreHostKey accepts any host key: a man in the middle is not noticed",
    ),
    (
        &[
            "net/http.ListenAndServe",
            "net/http.ListenAndServeTLS",
            "net/http.Serve",
            "net/http.ServeTLS",
        ],
        Rule::new("G114", K::RequestWithoutTimeout, S::Medium, C::High, 676),
        "this serves HTTP with no timeouts: use an http.Server with ReadHeaderTimeout",
    ),
    (
        &["plugin.Open"],
        Rule::new("PK202", K::DynamicImport, S::Medium, C::High, 829),
        "plugin.Open loads code chosen at run time",
    ),
    (
        &["github.com/gin-gonic/gin.SetMode"],
        Rule::new("PK701", K::DebugMode, S::Low, C::Low, 489),
        "check that the mode is not debug in production",
    ),
];
const UNSAFE: Rule = Rule::new("G103", K::UnsafeCode, S::Low, C::High, 242);
const BIND_ALL: Rule = Rule::new("G102", K::Network, S::Medium, C::High, 200);
const URL_VARIABLE: Rule = Rule::new("G107", K::Network, S::Medium, C::Medium, 88);
const ROOT_DIR: Rule = Rule::new("G111", K::PathTraversal, S::Medium, C::High, 22);
const SQL_FORMAT: Rule = Rule::new("G201", K::SqlInjection, S::Medium, C::High, 89);
const SUBPROCESS: Rule = Rule::new("G204", K::Subprocess, S::Medium, C::High, 78);
const SHELL: Rule = Rule::new("G204", K::ShellInjection, S::High, C::High, 78);
const MKDIR: Rule = Rule::new("G301", K::FilePermissions, S::Medium, C::High, 276);
const CHMOD: Rule = Rule::new("G302", K::FilePermissions, S::Medium, C::High, 276);
const TEMPFILE: Rule = Rule::new("G303", K::Tempfile, S::Medium, C::High, 377);
const FILE_PATH: Rule = Rule::new("G304", K::PathTraversal, S::Medium, C::High, 22);
const ZIP_SLIP: Rule = Rule::new("G305", K::ArchiveTraversal, S::Medium, C::High, 22);
const WRITE_FILE: Rule = Rule::new("G306", K::FilePermissions, S::Medium, C::High, 276);
const RSA: Rule = Rule::new("G403", K::WeakCipher, S::Medium, C::High, 310);
const MATH_RAND: Rule = Rule::new("G404", K::InsecureRandom, S::Medium, C::Medium, 338);

pub(super) fn call(node: Node<'_>, file: &File<'_>, out: &mut Vec<Finding>) {
    let src = file.src;
    let Some(function) = node.child_by_field_name("function") else {
        return;
    };
    let Some(path) = file.qualify(function) else {
        return;
    };
    let args: Vec<Node<'_>> = node
        .child_by_field_name("arguments")
        .map(named_children)
        .unwrap_or_default()
        .into_iter()
        .filter(|a| a.kind() != "comment")
        .collect();
    let literal = |index: usize| args.get(index).and_then(|a| literal_string(*a, file));

    for (names, rule, why) in BY_NAME {
        if names.contains(&path.as_str()) {
            out.push(rule.at(node, format!("{path}: {why}")));
        }
    }
    let (package, name) = path.rsplit_once('.').unwrap_or(("", &path));
    match package {
        "unsafe" => out.push(UNSAFE.at(
            node,
            format!("unsafe.{name} steps outside Go's memory safety"),
        )),
        "math/rand" | "math/rand/v2"
            if !matches!(name, "New" | "NewSource" | "Seed" | "NewPCG" | "NewChaCha8") =>
        {
            out.push(MATH_RAND.at(
                node,
                format!("{package}.{name} is predictable: use crypto/rand for tokens and keys"),
            ));
        }
        _ => {}
    }
    match path.as_str() {
        "net.Listen" | "net.ListenPacket" | "crypto/tls.Listen" | "net.ListenTCP" => {
            if let Some(address) = literal(1)
                && (address.starts_with("0.0.0.0:")
                    || address.starts_with(':')
                    || address.starts_with("[::]:"))
            {
                out.push(BIND_ALL.at(
                    node,
                    format!("{address:?} binds to every network interface"),
                ));
            }
        }
        "net/http.Get" | "net/http.Head" | "net/http.Post" | "net/http.PostForm"
            if literal(0).is_none() =>
        {
            out.push(URL_VARIABLE.at(
                node,
                format!("{path} with a URL built at run time: check where it points"),
            ));
        }
        "net/http.NewRequest" | "net/http.NewRequestWithContext" => {
            let index = usize::from(path.ends_with("WithContext")) + 1;
            if literal(index).is_none() {
                out.push(URL_VARIABLE.at(
                    node,
                    format!("{path} with a URL built at run time: check where it points"),
                ));
            }
        }
        "net/http.Dir" if literal(0).as_deref() == Some("/") => {
            out.push(ROOT_DIR.at(node, "http.Dir(\"/\") serves the whole file system"));
        }
        "fmt.Sprintf" | "fmt.Fprintf" | "fmt.Sprint" => {
            let index = usize::from(path == "fmt.Fprintf");
            if let Some(format) = literal(index)
                && looks_like_sql(&format)
                && (format.contains("%s")
                    || format.contains("%v")
                    || format.contains("%d")
                    || format.contains("%q"))
                && args.len() > index + 1
            {
                out.push(SQL_FORMAT.at(
                    node,
                    "SQL text is formatted with values: pass them as query parameters",
                ));
            }
        }
        "os/exec.Command"
        | "os/exec.CommandContext"
        | "syscall.Exec"
        | "syscall.ForkExec"
        | "os.StartProcess" => {
            let first = usize::from(path.ends_with("CommandContext"));
            let program = literal(first).unwrap_or_default();
            let program = program.rsplit('/').next().unwrap_or_default();
            let shell = matches!(
                program,
                "sh" | "bash" | "zsh" | "dash" | "cmd" | "cmd.exe" | "powershell"
            ) && args.iter().skip(first + 1).any(|a| {
                matches!(
                    literal_string(*a, file).as_deref(),
                    Some("-c" | "/c" | "-Command")
                )
            });
            let dynamic = args
                .iter()
                .skip(first)
                .any(|a| literal_string(*a, file).is_none());
            if shell && dynamic {
                out.push(SHELL.at(
                    node,
                    format!("{path} runs a shell script built at run time: anything in it can run"),
                ));
            } else if dynamic {
                out.push(SUBPROCESS.at(
                    node,
                    format!("{path} with arguments from variables: check where they come from"),
                ));
            }
        }
        "os.Mkdir" | "os.MkdirAll" => mode(node, args.get(1).copied(), 0o750, MKDIR, src, out),
        "os.Chmod" => mode(node, args.get(1).copied(), 0o600, CHMOD, src, out),
        "os.OpenFile" => {
            mode(node, args.get(2).copied(), 0o600, CHMOD, src, out);
            tmp(node, literal(0), out);
            path_input(node, &path, args.first().copied(), file, out);
        }
        "os.WriteFile" | "io/ioutil.WriteFile" => {
            mode(node, args.get(2).copied(), 0o600, WRITE_FILE, src, out);
            tmp(node, literal(0), out);
        }
        "os.Create" => tmp(node, literal(0), out),
        "os.Open" | "os.ReadFile" | "io/ioutil.ReadFile" => {
            path_input(node, &path, args.first().copied(), file, out);
        }
        "path/filepath.Join" | "path.Join" => {
            let archive = file.imports("archive/zip") || file.imports("archive/tar");
            let member = args.iter().any(|a| {
                descendants(*a).any(|n| {
                    n.kind() == "selector_expression"
                        && n.child_by_field_name("field")
                            .is_some_and(|f| text(f, src) == "Name")
                })
            });
            if archive && member {
                out.push(ZIP_SLIP.at(node, "an archive member's name is joined to a path unchecked: ../ in the name writes outside the target"));
            }
        }
        "crypto/rsa.GenerateKey" => {
            if let Some(bits) = args.get(1).and_then(|b| text(*b, src).parse::<u32>().ok())
                && bits < 2048
            {
                out.push(RSA.at(
                    node,
                    format!("a {bits}-bit RSA key is too short: use 2048 bits or more"),
                ));
            }
        }
        _ => {}
    }
}

/// A string literal, or a constant declared in the file as one.
fn literal_string(node: Node<'_>, file: &File<'_>) -> Option<String> {
    if let Some(value) = string_value(node, file.src) {
        return Some(value);
    }
    match node.kind() {
        "identifier" => file.constants.get(text(node, file.src)).cloned(),
        _ => None,
    }
}

fn mode(
    node: Node<'_>,
    arg: Option<Node<'_>>,
    limit: u32,
    rule: Rule,
    src: &[u8],
    out: &mut Vec<Finding>,
) {
    let Some(arg) = arg else { return };
    let raw = text(arg, src).replace('_', "").to_ascii_lowercase();
    let parsed = if let Some(octal) = raw.strip_prefix("0o") {
        u32::from_str_radix(octal, 8).ok()
    } else if let Some(hex) = raw.strip_prefix("0x") {
        u32::from_str_radix(hex, 16).ok()
    } else if raw.len() > 1 && raw.starts_with('0') {
        u32::from_str_radix(&raw[1..], 8).ok()
    } else {
        raw.parse().ok()
    };
    let Some(mode) = parsed else { return };
    if mode & 0o777 > limit {
        let rule = if mode & 0o002 != 0 {
            rule.with_severity(S::High)
        } else {
            rule
        };
        out.push(rule.at(
            node,
            format!("permissions {mode:#o} are broader than {limit:#o}"),
        ));
    }
}

fn tmp(node: Node<'_>, path: Option<String>, out: &mut Vec<Finding>) {
    if let Some(path) = path
        && (path.starts_with("/tmp/")
            || path.starts_with("/var/tmp/")
            || path.starts_with("/dev/shm/"))
    {
        out.push(TEMPFILE.at(
            node,
            format!("{path:?} is a fixed path in a shared temporary folder: use os.CreateTemp"),
        ));
    }
}

/// G304: a file opened by a path from a variable.
fn path_input(
    node: Node<'_>,
    function: &str,
    arg: Option<Node<'_>>,
    file: &File<'_>,
    out: &mut Vec<Finding>,
) {
    let Some(arg) = arg else { return };
    if literal_string(arg, file).is_some() {
        return;
    }
    let cleaned = arg.kind() == "call_expression"
        && arg
            .child_by_field_name("function")
            .and_then(|f| file.qualify(f))
            .is_some_and(|p| p == "path/filepath.Clean" || p == "path/filepath.Base");
    if !cleaned {
        out.push(FILE_PATH.at(node, format!("{function} with a path from a variable: ../ can reach files outside the intended folder")));
    }
}
