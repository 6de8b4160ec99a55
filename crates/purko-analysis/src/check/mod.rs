//! The pre-execution check: before the sandbox runs python or bash, the code is parsed and
//! every use of a listed API is a hit; any hit refuses the run. Comments and strings are never
//! read as instructions (`# nosec` switches nothing off: the model writes the comments), and
//! code that does not parse is refused, since the sandbox must not run what was not checked.

mod bash;
mod python;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The languages the sandbox runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodeLanguage {
    Python,
    Bash,
}

/// One refused use: where, what, and why it is refused.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    pub line: u32,
    pub api: String,
    pub why: String,
}

/// The check's answer: the hits, in line order; no hit allows the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Verdict {
    pub hits: Vec<Hit>,
}

impl Verdict {
    pub fn allows(&self) -> bool {
        self.hits.is_empty()
    }
}

/// One refused API and the reason a person reads.
///
/// Python entries are dotted paths matched against what the code resolves a name to: `os.system`
/// (that function), `subprocess` (the module and everything in it), `os.exec*` (a prefix).
/// Builtins are bare (`eval`). Bash entries are command names (`curl`), or one of the
/// structural rules: `/dev/tcp`, `/dev/udp`, `pipe-to-interpreter`, `inline-code`,
/// `dynamic-command`, `source-stdin`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "RawEntry", deny_unknown_fields)]
pub struct Entry {
    pub api: String,
    pub why: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawEntry {
    Name(String),
    Full {
        api: String,
        #[serde(default)]
        why: Option<String>,
    },
}

impl From<RawEntry> for Entry {
    fn from(raw: RawEntry) -> Self {
        match raw {
            RawEntry::Name(api) => Entry::new(&api, "listed by the operator"),
            RawEntry::Full { api, why } => {
                let why = why.unwrap_or_else(|| "listed by the operator".to_owned());
                Entry { api, why }
            }
        }
    }
}

impl Entry {
    pub fn new(api: &str, why: &str) -> Self {
        Self {
            api: api.to_owned(),
            why: why.to_owned(),
        }
    }
}

/// The refused APIs, per language. `Default` is Purko's list (see the crate's README).
///
/// In configuration each list is either a sequence, which replaces the default, or
/// `{extend: [...], remove: [...]}`, which changes it:
///
/// ```yaml
/// python: {extend: [requests], remove: [shutil]}
/// bash: [curl, wget, /dev/tcp]
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawCheckList")]
pub struct CheckList {
    pub python: Vec<Entry>,
    pub bash: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheckList {
    #[serde(default)]
    python: Option<RawList>,
    #[serde(default)]
    bash: Option<RawList>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawList {
    Replace(Vec<Entry>),
    Change(Change),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Change {
    #[serde(default)]
    extend: Vec<Entry>,
    #[serde(default)]
    remove: Vec<String>,
}

impl TryFrom<RawCheckList> for CheckList {
    type Error = Error;

    fn try_from(raw: RawCheckList) -> Result<Self> {
        let defaults = CheckList::default();
        let list = CheckList {
            python: apply(defaults.python, raw.python),
            bash: apply(defaults.bash, raw.bash),
        };
        list.validate()?;
        Ok(list)
    }
}

fn apply(default: Vec<Entry>, raw: Option<RawList>) -> Vec<Entry> {
    match raw {
        None => default,
        Some(RawList::Replace(entries)) => entries,
        Some(RawList::Change(change)) => {
            let mut entries: Vec<Entry> = default
                .into_iter()
                .filter(|e| !change.remove.contains(&e.api))
                .collect();
            for entry in change.extend {
                entries.retain(|e| e.api != entry.api);
                entries.push(entry);
            }
            entries
        }
    }
}

impl CheckList {
    /// Refuses entries that could never match.
    pub fn validate(&self) -> Result<()> {
        for (list, entries) in [("python", &self.python), ("bash", &self.bash)] {
            for entry in entries {
                if entry.api.trim().is_empty() {
                    return Err(Error::EmptyEntry { list });
                }
                if entry.api.chars().any(char::is_whitespace) {
                    return Err(Error::InvalidEntry {
                        list,
                        entry: entry.api.clone(),
                        reason: "contains white space: name one api or command per entry",
                    });
                }
            }
        }
        Ok(())
    }

    /// The entry matching a resolved python path, if any.
    pub(crate) fn python_entry(&self, path: &str) -> Option<&Entry> {
        self.python.iter().find(|e| path_matches(&e.api, path))
    }

    pub(crate) fn bash_entry(&self, name: &str) -> Option<&Entry> {
        self.bash.iter().find(|e| e.api == name)
    }
}

/// `os.exec*` is a prefix; `subprocess` covers `subprocess.run`; `os.system` only itself.
fn path_matches(pattern: &str, path: &str) -> bool {
    match pattern.strip_suffix('*') {
        Some(prefix) => path.starts_with(prefix),
        None => {
            path == pattern
                || path
                    .strip_prefix(pattern)
                    .is_some_and(|rest| rest.starts_with('.'))
        }
    }
}

const SHELL: &str = "runs a shell command";
const PROCESS: &str = "starts another program";
const CODE: &str = "runs code that was not checked";

impl Default for CheckList {
    fn default() -> Self {
        let python = [
            ("os.system", SHELL),
            ("os.popen", SHELL),
            ("os.exec*", PROCESS),
            ("os.spawn*", PROCESS),
            ("os.posix_spawn*", PROCESS),
            ("os.fork*", "forks the sandboxed process"),
            ("os.startfile", PROCESS),
            ("subprocess", PROCESS),
            ("pty", "spawns a process on a pseudo-terminal"),
            ("socket", "opens network connections"),
            ("shutil", "copies, moves or removes whole trees of files"),
            ("ctypes", "calls native code and reads or writes raw memory"),
            ("eval", CODE),
            ("exec", CODE),
            ("compile", "compiles code that was not checked"),
            ("__import__", "imports a module chosen at run time"),
            (
                "importlib.import_module",
                "imports a module chosen at run time",
            ),
            (
                "importlib.__import__",
                "imports a module chosen at run time",
            ),
            // The same powers under other names: `os` re-exports `posix`, and the private
            // modules behind subprocess, socket and ctypes can be imported directly.
            ("posix.system", SHELL),
            ("posix.exec*", PROCESS),
            ("posix.spawn*", PROCESS),
            ("posix.posix_spawn*", PROCESS),
            ("posix.fork*", "forks the sandboxed process"),
            ("nt.system", SHELL),
            ("_posixsubprocess", PROCESS),
            ("_socket", "opens network connections"),
            (
                "_ctypes",
                "calls native code and reads or writes raw memory",
            ),
            ("multiprocessing", PROCESS),
            ("asyncio.create_subprocess_exec", PROCESS),
            ("asyncio.create_subprocess_shell", SHELL),
            // Code from somewhere other than the checked text.
            ("runpy", "runs a module or file that was not checked"),
            ("code", "starts an interpreter on code that was not checked"),
            ("codeop", "compiles code that was not checked"),
            (
                "importlib.util",
                "loads a module from a file that was not checked",
            ),
            (
                "importlib.machinery",
                "loads a module from a file that was not checked",
            ),
            (
                "types.CodeType",
                "builds code objects from bytes that were not checked",
            ),
            (
                "types.FunctionType",
                "builds functions from code objects that were not checked",
            ),
            // Unpickling runs whatever callable the data names (`os.system` included).
            (
                "pickle.load*",
                "unpickling runs any callable the data names",
            ),
            (
                "pickle.Unpickler",
                "unpickling runs any callable the data names",
            ),
            ("_pickle", "unpickling runs any callable the data names"),
            ("marshal.load*", "loads code objects that were not checked"),
            (
                "shelve",
                "shelve files are pickles: opening one runs any callable they name",
            ),
        ];
        let bash = [
            ("curl", "a network tool"),
            ("wget", "a network tool"),
            ("nc", "a network tool"),
            ("ncat", "a network tool"),
            ("netcat", "a network tool"),
            ("socat", "a network tool"),
            ("ssh", "a network tool"),
            ("scp", "a network tool"),
            ("sftp", "a network tool"),
            ("telnet", "a network tool"),
            ("ftp", "a network tool"),
            ("rsync", "a network tool"),
            ("eval", "runs a string as shell code that was not checked"),
            ("sudo", "changes user"),
            ("su", "changes user"),
            ("doas", "changes user"),
            (
                "/dev/tcp",
                "bash opens a network connection through this path",
            ),
            (
                "/dev/udp",
                "bash opens a network connection through this path",
            ),
            (
                "pipe-to-interpreter",
                "feeds data to an interpreter on its standard input: code that was not checked",
            ),
            (
                "inline-code",
                "hands an interpreter code in an argument (python -c, perl -e): code that was not checked",
            ),
            (
                "dynamic-command",
                "the command's name is computed at run time, so it cannot be checked",
            ),
            (
                "source-stdin",
                "sources a script produced at run time: code that was not checked",
            ),
        ];
        Self {
            python: python.iter().map(|(a, w)| Entry::new(a, w)).collect(),
            bash: bash.iter().map(|(a, w)| Entry::new(a, w)).collect(),
        }
    }
}

/// Code larger than this is refused unread.
const MAX_CODE_BYTES: usize = 1024 * 1024;

/// Checks code before it runs.
pub fn check(code: &str, language: CodeLanguage, list: &CheckList) -> Verdict {
    let mut hits = if code.len() > MAX_CODE_BYTES {
        vec![Hit {
            line: 1,
            api: "size".to_owned(),
            why: format!(
                "the code is {} bytes, over the limit of {MAX_CODE_BYTES}; it was not checked",
                code.len()
            ),
        }]
    } else if code.contains('\0') {
        vec![Hit {
            line: 1,
            api: "binary".to_owned(),
            why: "the code contains NUL bytes; it was not checked".to_owned(),
        }]
    } else {
        match language {
            CodeLanguage::Python => python::check(code, list),
            CodeLanguage::Bash => bash::check(code, list, 0),
        }
    };
    hits.sort_by(|a, b| (a.line, &a.api).cmp(&(b.line, &b.api)));
    hits.dedup_by(|a, b| a.line == b.line && a.api == b.api);
    Verdict { hits }
}

fn syntax_hit(line: u32, language: &str) -> Hit {
    Hit {
        line,
        api: "syntax".to_owned(),
        why: format!("the code does not parse as {language} here, so it cannot be checked"),
    }
}
