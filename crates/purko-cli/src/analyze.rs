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

/// What one file gave: the lines to print, or the error and hint to print instead.
enum Outcome {
    Printed(String),
    Failed { message: String, hint: &'static str },
}

pub fn run(args: &AnalyzeArgs) -> Result<(), Failure> {
    let files = expand(&args.paths, args.check);
    let outcomes = in_parallel(&files, |file| one(file, args));
    let mut out = std::io::stdout().lock();
    let mut unreadable = 0usize;
    // Results are printed in the order the files were given, whichever thread finished first.
    for outcome in outcomes {
        match outcome {
            Outcome::Printed(text) => out.write_all(text.as_bytes()).map_err(|e| {
                Failure::new(
                    format!("cannot write the output: {e}"),
                    "check that standard output is open",
                    1,
                )
            })?,
            Outcome::Failed { message, hint } => {
                unreadable += 1;
                let _ = out.flush();
                let mut err = std::io::stderr().lock();
                let _ = writeln!(err, "error: {message}");
                let _ = writeln!(err, "hint: {hint}");
            }
        }
    }
    let _ = out.flush();
    if unreadable > 0 {
        return Err(Failure::new(
            format!(
                "{unreadable} of {} files could not be analyzed",
                files.len()
            ),
            "the other files' results are above; fix the paths named in the errors",
            1,
        ));
    }
    Ok(())
}

fn one(file: &Path, args: &AnalyzeArgs) -> Outcome {
    let shown = file.display().to_string();
    let bytes = match read(file) {
        Ok(bytes) => bytes,
        Err(message) => {
            return Outcome::Failed {
                message: format!("cannot read {shown}: {message}"),
                hint: "check the path and its permissions",
            };
        }
    };
    if args.check {
        let Some(language) = code_language(file, &bytes) else {
            return Outcome::Failed {
                message: format!("cannot tell the language of {shown}"),
                hint: "name it .py, .sh or .bash, or start it with a #! line",
            };
        };
        let verdict = verdict(&bytes, language, &CheckList::default());
        Outcome::Printed(render_verdict(&shown, &verdict, args.format))
    } else {
        let Some(language) = SourceLanguage::from_path(file) else {
            return Outcome::Failed {
                message: format!("cannot tell the language of {shown}"),
                hint: "name it .py or .go",
            };
        };
        Outcome::Printed(render_findings(
            &shown,
            &analyze(&bytes, language),
            args.format,
        ))
    }
}

/// Runs `work` on every file, on as many threads as there are cores, and returns the results
/// in the files' order.
fn in_parallel(files: &[PathBuf], work: impl Fn(&Path) -> Outcome + Sync) -> Vec<Outcome> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZeroUsize::get)
        .min(files.len())
        .max(1);
    if threads == 1 {
        return files.iter().map(|f| work(f)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut results: Vec<(usize, Outcome)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let index = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        let Some(file) = files.get(index) else { break };
                        done.push((index, work(file)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| {
                w.join()
                    .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
            })
            .collect()
    });
    results.sort_by_key(|(index, _)| *index);
    results.into_iter().map(|(_, outcome)| outcome).collect()
}

/// Reads at most one byte past the analyzer's limit: a larger file is reported, not loaded.
fn read(path: &Path) -> Result<Vec<u8>, String> {
    let file = std::fs::File::open(path).map_err(|e| e.to_string())?;
    let metadata = file.metadata().map_err(|e| e.to_string())?;
    if metadata.is_dir() {
        return Err("it is a folder".into());
    }
    // Sized from the file, not from the limit: a 4 MiB buffer per file costs more than the
    // analysis of a small one.
    let expected = usize::try_from(metadata.len()).unwrap_or(usize::MAX);
    let mut bytes = Vec::with_capacity(expected.min(MAX_SOURCE_BYTES) + 1);
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
