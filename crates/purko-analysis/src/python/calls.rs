//! Calls, matched by the dotted path of the function after alias resolution.

use tree_sitter::Node;

use super::Module;
use super::by_name::BY_NAME;
use crate::finding::{Confidence as C, Finding, Kind as K, Rule, Severity as S};
use crate::pynames::string_literal;
use crate::tree::{named_children, text};

/// A call's arguments: positional in order, keywords by name.
struct Arguments<'t> {
    positional: Vec<Node<'t>>,
    keywords: Vec<(&'t str, Node<'t>)>,
}

impl<'t> Arguments<'t> {
    fn of(call: Node<'t>, src: &'t [u8]) -> Self {
        let mut positional = Vec::new();
        let mut keywords = Vec::new();
        if let Some(list) = call.child_by_field_name("arguments") {
            for arg in named_children(list) {
                match arg.kind() {
                    "keyword_argument" => {
                        if let (Some(name), Some(value)) = (
                            arg.child_by_field_name("name"),
                            arg.child_by_field_name("value"),
                        ) {
                            keywords.push((text(name, src), value));
                        }
                    }
                    "comment" | "list_splat" | "dictionary_splat" => {}
                    _ => positional.push(arg),
                }
            }
        }
        Self {
            positional,
            keywords,
        }
    }

    fn keyword(&self, name: &str) -> Option<Node<'t>> {
        self.keywords
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v)
    }
}

/// Python's falsy literals; anything else passed as `shell=` may be true.
fn falsy(node: Node<'_>, src: &[u8]) -> bool {
    match node.kind() {
        "false" | "none" => true,
        "integer" => text(node, src) == "0",
        "list" | "dictionary" | "tuple" | "set" => named_children(node).is_empty(),
        "string" => string_literal(node, src).is_some_and(|s| s.is_empty()),
        _ => false,
    }
}

fn is_true(node: Node<'_>) -> bool {
    node.kind() == "true"
}

fn matches(pattern: &str, path: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => path == pattern,
    }
}

const SUBPROCESS: &[&str] = &[
    "subprocess.Popen",
    "subprocess.call",
    "subprocess.check_call",
    "subprocess.check_output",
    "subprocess.run",
];
const SHELL_TRUE: Rule = Rule::new("B602", K::ShellInjection, S::High, C::High, 78);
const NO_SHELL: Rule = Rule::new("B603", K::Subprocess, S::Low, C::High, 78);
const OTHER_SHELL: Rule = Rule::new("B604", K::ShellInjection, S::Medium, C::Low, 78);
const PARTIAL_PATH: Rule = Rule::new("B607", K::Subprocess, S::Low, C::High, 78);
const WILDCARD: Rule = Rule::new("B609", K::ShellInjection, S::High, C::Medium, 78);
const PARAMIKO: Rule = Rule::new("B601", K::ShellInjection, S::Medium, C::Medium, 78);
const CHMOD: Rule = Rule::new("B103", K::FilePermissions, S::Medium, C::High, 732);
const FLASK_DEBUG: Rule = Rule::new("B201", K::DebugMode, S::High, C::Medium, 94);
const TAR: Rule = Rule::new("B202", K::ArchiveTraversal, S::High, C::High, 22);
const UNPACK: Rule = Rule::new("PK501", K::ArchiveTraversal, S::Medium, C::Medium, 22);
const NO_TIMEOUT: Rule = Rule::new("B113", K::RequestWithoutTimeout, S::Medium, C::Low, 400);
const NO_VERIFY: Rule = Rule::new("B501", K::InsecureTls, S::High, C::High, 295);
const NO_TLS_VERSION: Rule = Rule::new("B504", K::InsecureTls, S::Low, C::Medium, 327);
const WEAK_KEY: Rule = Rule::new("B505", K::WeakCipher, S::High, C::High, 326);
const YAML: Rule = Rule::new("B506", K::InsecureDeserialization, S::High, C::High, 20);
const HOST_KEY: Rule = Rule::new("B507", K::InsecureTls, S::High, C::Medium, 295);
const TORCH: Rule = Rule::new("B614", K::InsecureDeserialization, S::High, C::High, 502);
const NUMPY: Rule = Rule::new("PK203", K::InsecureDeserialization, S::High, C::High, 502);
const HASH_NEW: Rule = Rule::new("B324", K::WeakHash, S::Medium, C::High, 327);
const DJANGO_EXTRA: Rule = Rule::new("B610", K::SqlInjection, S::Medium, C::Medium, 89);
const PATH: Rule = Rule::new("PK401", K::PathTraversal, S::Medium, C::Medium, 22);
const SECRET_ARG: Rule = Rule::new("B106", K::HardcodedSecret, S::High, C::Medium, 259);

const REQUESTS: &[&str] = &[
    "requests.get",
    "requests.post",
    "requests.put",
    "requests.delete",
    "requests.patch",
    "requests.options",
    "requests.head",
    "requests.request",
];
const HTTPX: &[&str] = &[
    "httpx.get",
    "httpx.post",
    "httpx.put",
    "httpx.delete",
    "httpx.patch",
    "httpx.options",
    "httpx.head",
    "httpx.request",
    "httpx.stream",
    "httpx.Client",
    "httpx.AsyncClient",
];

pub(super) fn call(node: Node<'_>, module: &Module<'_>, out: &mut Vec<Finding>) {
    let src = module.src;
    let Some(function) = node.child_by_field_name("function") else {
        return;
    };
    let path = module.names.qualify(function, src).unwrap_or_default();
    let method = match function.kind() {
        "attribute" => function
            .child_by_field_name("attribute")
            .map_or("", |a| text(a, src)),
        _ => "",
    };
    let args = Arguments::of(node, src);

    let not_for_security = args
        .keyword("usedforsecurity")
        .is_some_and(|u| u.kind() == "false");
    for (patterns, rule, why) in BY_NAME {
        if patterns.iter().any(|p| matches(p, &path)) {
            if rule.kind == K::WeakHash && not_for_security {
                break;
            }
            out.push(rule.at(node, format!("{path}: {why}")));
            if rule.kind == K::ShellInjection {
                wildcard(node, &args, src, out);
            }
            break;
        }
    }

    let shell = args.keyword("shell");
    let shell_true = shell.is_some_and(|s| !falsy(s, src));
    if SUBPROCESS.contains(&path.as_str()) {
        if shell_true {
            out.push(SHELL_TRUE.at(
                node,
                format!("{path} with shell=True: anything in the command string can run"),
            ));
            wildcard(node, &args, src, out);
        } else {
            out.push(NO_SHELL.at(
                node,
                format!("{path} starts a process: check where its arguments come from"),
            ));
        }
        partial_path(node, &args, src, out);
    } else if shell_true {
        out.push(OTHER_SHELL.at(
            node,
            format!(
                "`{}` is called with shell=True: a shell may run the command string",
                truncate(text(function, src))
            ),
        ));
    } else if path.starts_with("os.exec")
        || path.starts_with("os.spawn")
        || path == "os.system"
        || path == "os.popen"
    {
        partial_path(node, &args, src, out);
    }

    if method == "exec_command" && module.imports("paramiko") {
        out.push(PARAMIKO.at(
            node,
            "paramiko exec_command runs its argument through the remote shell",
        ));
    }
    if matches!(path.as_str(), "os.chmod" | "os.fchmod" | "os.lchmod")
        || (method == "chmod" && !path.starts_with("os."))
    {
        let mode = args.keyword("mode").or_else(|| {
            args.positional
                .get(usize::from(path.starts_with("os.")))
                .copied()
        });
        if let Some(mode) = mode.and_then(|m| permission_bits(m, module, 0)) {
            if mode & 0o002 != 0 {
                out.push(CHMOD.with_severity(S::High).at(
                    node,
                    format!("chmod to {mode:#o} makes the file writable by every user"),
                ));
            } else if mode & 0o020 != 0 || mode & 0o010 != 0 {
                out.push(CHMOD.at(
                    node,
                    format!("chmod to {mode:#o} is broader than the file likely needs"),
                ));
            }
        }
    }
    if method == "run" && module.imports("flask") && args.keyword("debug").is_some_and(is_true) {
        out.push(FLASK_DEBUG.at(
            node,
            "a Flask app runs with debug=True: the Werkzeug debugger runs code sent to it",
        ));
    }
    if matches!(method, "extractall" | "extract") && module.imports("tarfile") {
        let filtered = args.keyword("filter").is_some_and(|f| {
            string_literal(f, src).is_some_and(|v| v == "data" || v == "tar")
                || text(f, src).ends_with("data_filter")
                || text(f, src).ends_with("tar_filter")
        });
        // Members chosen by a function may be filtered; Bandit still reports them, lower.
        let members = args.keyword("members").is_some_and(|m| m.kind() == "call");
        if !filtered {
            let rule = if members {
                TAR.with_severity(S::Low).with_confidence(C::Low)
            } else {
                TAR
            };
            out.push(rule.at(
                node,
                "tar members are extracted unchecked: a name like ../../etc/x writes outside the target; pass filter=\"data\"",
            ));
        }
    }
    if path == "shutil.unpack_archive" && args.keyword("filter").is_none() {
        out.push(UNPACK.at(
            node,
            "shutil.unpack_archive without filter= extracts tar members unchecked",
        ));
    }
    if REQUESTS.contains(&path.as_str()) || (path.starts_with("requests.") && method == "request") {
        match args.keyword("timeout") {
            None => {
                out.push(
                    NO_TIMEOUT.at(node, format!("{path} without a timeout can hang for ever")),
                );
            }
            Some(t) if t.kind() == "none" => {
                out.push(
                    NO_TIMEOUT.at(node, format!("{path} with timeout=None can hang for ever")),
                );
            }
            Some(_) => {}
        }
    }
    if HTTPX.contains(&path.as_str()) && args.keyword("timeout").is_some_and(|t| t.kind() == "none")
    {
        out.push(NO_TIMEOUT.at(node, format!("{path} with timeout=None can hang for ever")));
    }
    let http_client = REQUESTS.contains(&path.as_str())
        || HTTPX.contains(&path.as_str())
        || (path.starts_with("requests.") && method == "request")
        || matches!(
            method,
            "get" | "post" | "put" | "delete" | "patch" | "request" | "head" | "options"
        ) && (module.imports("requests") || module.imports("httpx"));
    if http_client && args.keyword("verify").is_some_and(|v| v.kind() == "false") {
        out.push(NO_VERIFY.at(
            node,
            format!(
                "`{}` with verify=False accepts any certificate",
                truncate(text(function, src))
            ),
        ));
    }
    for (name, value) in &args.keywords {
        if let Some(literal) = string_literal(*value, src)
            && crate::secrets::secret_binding(name, &literal)
        {
            out.push(super::literals::secret_rule(SECRET_ARG, &literal).at(
                *value,
                format!("possible hardcoded secret passed as `{name}`"),
            ));
        }
    }
    if path == "ssl.wrap_socket" && args.keyword("ssl_version").is_none() {
        out.push(NO_TLS_VERSION.at(node, "ssl.wrap_socket without ssl_version may negotiate an old protocol; it is also removed in Python 3.12"));
    }
    if matches!(path.as_str(), "yaml.load" | "yaml.load_all") {
        let loader = args
            .keyword("Loader")
            .or_else(|| args.positional.get(1).copied());
        let safe = loader.is_some_and(|l| {
            let name = text(l, src);
            name.ends_with("SafeLoader")
                || name.ends_with("CSafeLoader")
                || name.ends_with("BaseLoader")
        });
        if !safe {
            out.push(YAML.at(node, format!("{path} without a safe Loader builds arbitrary Python objects: use yaml.safe_load")));
        }
    }
    if method == "set_missing_host_key_policy" {
        let policy = args
            .positional
            .first()
            .map(|p| text(*p, src))
            .unwrap_or_default();
        if policy.contains("AutoAddPolicy") || policy.contains("WarningPolicy") {
            out.push(HOST_KEY.at(
                node,
                "paramiko accepts unknown host keys: a man in the middle is not noticed",
            ));
        }
    }
    if path == "torch.load" && !args.keyword("weights_only").is_some_and(is_true) {
        out.push(TORCH.at(
            node,
            "torch.load unpickles the file: pass weights_only=True",
        ));
    }
    if path == "numpy.load" && args.keyword("allow_pickle").is_some_and(is_true) {
        out.push(NUMPY.at(node, "numpy.load with allow_pickle=True unpickles the file"));
    }
    if path == "hashlib.new" {
        let name = args
            .keyword("name")
            .or_else(|| args.positional.first().copied());
        let name = name
            .and_then(|n| string_literal(n, src))
            .unwrap_or_default()
            .to_ascii_lowercase();
        let for_security = args
            .keyword("usedforsecurity")
            .is_none_or(|u| u.kind() != "false");
        if matches!(name.as_str(), "md4" | "md5" | "sha1" | "sha" | "ripemd160") && for_security {
            out.push(HASH_NEW.at(
                node,
                format!("hashlib.new({name:?}): {name} is broken for security use"),
            ));
        }
    }
    weak_key(node, &path, &args, src, out);
    if matches!(path.as_str(), "crypt.crypt" | "crypt.mksalt") {
        let method = args
            .keyword("salt")
            .or_else(|| {
                args.positional
                    .get(usize::from(path == "crypt.crypt"))
                    .copied()
            })
            .and_then(|m| module.names.qualify(m, src));
        if let Some(method) = method.filter(|m| {
            matches!(
                m.as_str(),
                "crypt.METHOD_CRYPT" | "crypt.METHOD_MD5" | "crypt.METHOD_BLOWFISH"
            )
        }) {
            out.push(HASH_NEW.at(node, format!("{method} is a weak password hash")));
        }
    }
    if method == "extra"
        && (module.imports("django")
            || args.keyword("where").is_some()
            || args.keyword("select").is_some())
    {
        let dynamic = args
            .positional
            .iter()
            .chain(args.keywords.iter().map(|(_, v)| v))
            .any(|v| !literal_tree(*v));
        if dynamic {
            out.push(DJANGO_EXTRA.at(
                node,
                "QuerySet.extra with SQL built from values: use parameters",
            ));
        }
    }
    if matches!(
        path.as_str(),
        "open"
            | "io.open"
            | "flask.send_file"
            | "flask.send_from_directory"
            | "os.path.join"
            | "pathlib.Path"
    ) && args
        .positional
        .iter()
        .any(|a| text(*a, src).contains("request."))
    {
        out.push(PATH.at(
            node,
            format!(
                "{path} with a path from the request: ../ reaches files outside the intended folder"
            ),
        ));
    }
}

/// Whether an expression is made of literals only.
fn literal_tree(node: Node<'_>) -> bool {
    crate::tree::descendants(node).all(|n| {
        !matches!(
            n.kind(),
            "identifier" | "call" | "interpolation" | "binary_operator" | "attribute" | "subscript"
        )
    })
}

fn truncate(text: &str) -> String {
    text.chars().take(60).collect()
}

/// B607: a program named without its full path is found through `PATH`, which may be
/// someone else's.
fn partial_path(node: Node<'_>, args: &Arguments<'_>, src: &[u8], out: &mut Vec<Finding>) {
    let Some(first) = args
        .positional
        .first()
        .copied()
        .or_else(|| args.keyword("args"))
    else {
        return;
    };
    let program = match first.kind() {
        "list" | "tuple" => named_children(first)
            .first()
            .and_then(|p| string_literal(*p, src)),
        _ => string_literal(first, src)
            .map(|s| s.split_whitespace().next().unwrap_or_default().to_owned()),
    };
    if let Some(program) = program
        && !program.is_empty()
        && !program.starts_with(['/', '\\', '.'])
        && program.chars().nth(1).is_none_or(|c| c != ':')
    {
        out.push(PARTIAL_PATH.at(
            node,
            format!("`{program}` is started by a partial path, resolved through PATH"),
        ));
    }
}

/// B609: `*` in a command for tools that read options from file names.
fn wildcard(node: Node<'_>, args: &Arguments<'_>, src: &[u8], out: &mut Vec<Finding>) {
    let Some(command) = args
        .positional
        .first()
        .and_then(|c| string_literal(*c, src))
    else {
        return;
    };
    let tool = command.split_whitespace().next().unwrap_or_default();
    let tool = tool.rsplit('/').next().unwrap_or(tool);
    if command.contains('*') && matches!(tool, "chown" | "chmod" | "tar" | "rsync") {
        out.push(WILDCARD.at(node, format!("`{tool}` with a wildcard: a file named like an option (--checkpoint-action=...) becomes one")));
    }
}

/// B505: RSA and DSA keys under 2048 bits, EC curves under 224.
fn weak_key(node: Node<'_>, path: &str, args: &Arguments<'_>, src: &[u8], out: &mut Vec<Finding>) {
    let rsa = matches!(
        path,
        "cryptography.hazmat.primitives.asymmetric.rsa.generate_private_key"
            | "cryptography.hazmat.primitives.asymmetric.dsa.generate_private_key"
            | "Crypto.PublicKey.RSA.generate"
            | "Crypto.PublicKey.DSA.generate"
            | "Cryptodome.PublicKey.RSA.generate"
            | "Cryptodome.PublicKey.DSA.generate"
    );
    if rsa {
        let size = args
            .keyword("key_size")
            .or_else(|| args.keyword("bits"))
            .or_else(|| {
                let index = usize::from(path.starts_with("cryptography") && path.contains(".rsa."));
                args.positional.get(index).copied()
            })
            .and_then(|s| text(s, src).parse::<u32>().ok());
        if let Some(size) = size.filter(|s| *s < 2048) {
            out.push(WEAK_KEY.at(
                node,
                format!("a {size}-bit key is too short: use 2048 bits or more"),
            ));
        }
    }
    if path.starts_with("cryptography.hazmat.primitives.asymmetric.ec.generate_private_key") {
        let curve = args
            .positional
            .first()
            .or_else(|| args.keywords.first().map(|(_, v)| v));
        if let Some(curve) = curve {
            let curve = text(*curve, src);
            if curve.contains("SECP192R1") || curve.contains("SECT163") {
                out.push(WEAK_KEY.at(
                    node,
                    "this elliptic curve is too small: use SECP256R1 or larger",
                ));
            }
        }
    }
}

/// The bits of a permission mode written as a literal or `stat.S_I*` flags or'ed together.
fn permission_bits(node: Node<'_>, module: &Module<'_>, depth: u32) -> Option<u32> {
    if depth > 32 {
        return None;
    }
    let src = module.src;
    match node.kind() {
        "integer" => {
            let raw = text(node, src).replace('_', "").to_ascii_lowercase();
            if let Some(octal) = raw.strip_prefix("0o") {
                u32::from_str_radix(octal, 8).ok()
            } else if let Some(hex) = raw.strip_prefix("0x") {
                u32::from_str_radix(hex, 16).ok()
            } else {
                raw.parse().ok()
            }
        }
        "binary_operator" => {
            let left = permission_bits(node.child_by_field_name("left")?, module, depth + 1)?;
            let right = permission_bits(node.child_by_field_name("right")?, module, depth + 1)?;
            let operator = node.child_by_field_name("operator").map(|o| text(o, src));
            match operator {
                Some("|" | "+") => Some(left | right),
                _ => None,
            }
        }
        "attribute" | "identifier" => {
            let path = module.names.qualify(node, src)?;
            let name = path.strip_prefix("stat.")?;
            Some(match name {
                "S_IRWXU" => 0o700,
                "S_IRUSR" => 0o400,
                "S_IWUSR" => 0o200,
                "S_IXUSR" => 0o100,
                "S_IRWXG" => 0o070,
                "S_IRGRP" => 0o040,
                "S_IWGRP" => 0o020,
                "S_IXGRP" => 0o010,
                "S_IRWXO" => 0o007,
                "S_IROTH" => 0o004,
                "S_IWOTH" => 0o002,
                "S_IXOTH" => 0o001,
                _ => return None,
            })
        }
        "parenthesized_expression" => {
            permission_bits(named_children(node).into_iter().next()?, module, depth + 1)
        }
        _ => None,
    }
}
