//! `purko analyze`: the static analyzer and the pre-execution check on files, one JSON line
//! (or one human line) per finding or verdict. Findings never change the exit code; a file that
//! cannot be read does (1), after every other file has been analyzed.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use purko_analysis::{
    CheckList, CodeLanguage, Finding, Hit, MAX_SOURCE_BYTES, SourceLanguage, Verdict, analyze,
    check,
};
use serde::Serialize;

use crate::{CheckFormat, Failure};

#[derive(clap::Args, Debug)]
pub struct AnalyzeArgs {
    /// Print the pre-execution verdict (allow or reject, with the refused calls) that the
    /// sandbox applies to python and bash, instead of the findings.
    #[arg(long)]
    check: bool,
    /// Output format: JSON lines, or one line a person reads.
    #[arg(long, value_enum, default_value_t = CheckFormat::Json)]
    format: CheckFormat,
    /// Files, or folders searched for `.py` and `.go` files (`.sh` and `.bash` too with
    /// `--check`).
    #[arg(value_name = "PATH", required = true)]
    paths: Vec<PathBuf>,
}

#[derive(Serialize)]
struct FindingLine<'a> {
    file: &'a str,
    #[serde(flatten)]
    finding: &'a Finding,
}

#[derive(Serialize)]
struct VerdictLine<'a> {
    file: &'a str,
    verdict: &'static str,
    hits: &'a [Hit],
}

pub fn run(args: &AnalyzeArgs) -> Result<(), Failure> {
    let files = expand(&args.paths, args.check);
    let list = CheckList::default();
    let mut out = std::io::stdout().lock();
    let mut unreadable = 0usize;
    let mut count = 0usize;
    for file in &files {
        count += 1;
        let shown = file.display().to_string();
        let bytes = match read(file) {
            Ok(bytes) => bytes,
            Err(message) => {
                unreadable += 1;
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "error: cannot read {shown}: {message}");
                let _ = writeln!(err, "hint: check the path and its permissions");
                continue;
            }
        };
        let text = if args.check {
            let Some(language) = code_language(file, &bytes) else {
                unreadable += 1;
                not_a_language(
                    &shown,
                    "name it .py, .sh or .bash, or start it with a #! line",
                );
                continue;
            };
            render_verdict(&shown, &verdict(&bytes, language, &list), args.format)
        } else {
            let Some(language) = SourceLanguage::from_path(file) else {
                unreadable += 1;
                not_a_language(&shown, "name it .py or .go");
                continue;
            };
            render_findings(&shown, &analyze(&bytes, language), args.format)
        };
        out.write_all(text.as_bytes()).map_err(|e| {
            Failure::new(
                format!("cannot write the output: {e}"),
                "check that standard output is open",
                1,
            )
        })?;
    }
    let _ = out.flush();
    if unreadable > 0 {
        return Err(Failure::new(
            format!("{unreadable} of {count} files could not be analyzed"),
            "the other files' results are above; fix the paths named in the errors",
            1,
        ));
    }
    Ok(())
}

fn not_a_language(file: &str, fix: &str) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "error: cannot tell the language of {file}");
    let _ = writeln!(err, "hint: {fix}");
}

/// Reads at most one byte past the analyzer's limit: a larger file is reported, not loaded.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err("it is a folder".into());
    }
    let mut bytes = Vec::new();
    file.take(MAX_SOURCE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.to_string())?;
    Ok(bytes)
}

/// Folders become the files under them with a known extension, sorted; files stay as given.
fn expand(paths: &[PathBuf], check: bool) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for path in paths {
        if path.is_dir() {
            let mut found = Vec::new();
            walk(path, check, &mut found);
            found.sort();
            files.extend(found);
        } else {
            files.push(path.clone());
        }
    }
    files
}

fn walk(dir: &Path, check: bool, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        found.push(dir.to_path_buf());
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, check, found);
        } else if kind.is_file() {
            let known = if check {
                matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("py" | "sh" | "bash")
                )
            } else {
                SourceLanguage::from_path(&path).is_some()
            };
            if known {
                found.push(path);
            }
        }
    }
}

fn code_language(path: &Path, bytes: &[u8]) -> Option<CodeLanguage> {
    match path.extension().and_then(|e| e.to_str()) {
        Some("py") => return Some(CodeLanguage::Python),
        Some("sh" | "bash") => return Some(CodeLanguage::Bash),
        _ => {}
    }
    let first = bytes.split(|&b| b == b'\n').next()?;
    let first = std::str::from_utf8(first).ok()?;
    let interpreter = first.strip_prefix("#!")?;
    if interpreter.contains("python") {
        Some(CodeLanguage::Python)
    } else if interpreter.contains("bash") || interpreter.trim_end().ends_with("sh") {
        Some(CodeLanguage::Bash)
    } else {
        None
    }
}

fn verdict(bytes: &[u8], language: CodeLanguage, list: &CheckList) -> Verdict {
    match std::str::from_utf8(bytes) {
        Ok(code) => check(code, language, list),
        Err(_) => Verdict {
            hits: vec![Hit {
                line: 1,
                api: "encoding".to_owned(),
                why: "the file is not UTF-8 text, so it was not checked".to_owned(),
            }],
        },
    }
}

fn render_findings(file: &str, findings: &[Finding], format: CheckFormat) -> String {
    let mut text = String::new();
    for finding in findings {
        match format {
            CheckFormat::Json => {
                text.push_str(
                    &serde_json::to_string(&FindingLine { file, finding }).unwrap_or_default(),
                );
            }
            CheckFormat::Text => {
                let _ = write!(
                    text,
                    "{file}:{}:{}: {} {} {} {}",
                    finding.line,
                    finding.column,
                    finding.severity.as_str(),
                    finding.rule,
                    finding.kind.as_str(),
                    finding.message
                );
            }
        }
        text.push('\n');
    }
    text
}

fn render_verdict(file: &str, verdict: &Verdict, format: CheckFormat) -> String {
    let word = if verdict.allows() { "allow" } else { "reject" };
    match format {
        CheckFormat::Json => {
            let mut line = serde_json::to_string(&VerdictLine {
                file,
                verdict: word,
                hits: &verdict.hits,
            })
            .unwrap_or_default();
            line.push('\n');
            line
        }
        CheckFormat::Text => {
            let mut text = format!("{file}: {word}\n");
            for hit in &verdict.hits {
                let _ = writeln!(text, "{file}:{}: {}: {}", hit.line, hit.api, hit.why);
            }
            text
        }
    }
}
