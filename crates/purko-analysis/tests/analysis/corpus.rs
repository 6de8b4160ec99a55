//! The corpus: files under `must_catch/` declare each finding they must produce with a
//! trailing `# expect: RULE...` (`// expect:` in Go); files under `clean/` are real library
//! code that must produce none.

use std::path::{Path, PathBuf};

use purko_analysis::{SourceLanguage, analyze};

fn corpus(folder: &str) -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/corpus")
        .join(folder);
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| SourceLanguage::from_path(p).is_some())
        .collect();
    files.sort();
    files
}

/// (line, rule) pairs a file declares.
fn expectations(source: &[u8]) -> Vec<(u32, String)> {
    let text = String::from_utf8_lossy(source);
    let mut expected = Vec::new();
    for (index, line) in text.lines().enumerate() {
        let Some(at) = line.find("expect: ") else {
            continue;
        };
        let before = &line[..at];
        if !(before.trim_end().ends_with('#') || before.trim_end().ends_with("//")) {
            continue;
        }
        for rule in line[at + 8..].split_whitespace() {
            expected.push((u32::try_from(index + 1).unwrap(), rule.to_owned()));
        }
    }
    expected
}

#[test]
fn must_catch_recall_is_at_least_ninety_percent() {
    let mut expected_total = 0usize;
    let mut found_total = 0usize;
    let mut missed = Vec::new();
    let mut per_language = [(0usize, 0usize); 2];
    for path in corpus("must_catch") {
        let language = SourceLanguage::from_path(&path).unwrap();
        let source = std::fs::read(&path).unwrap();
        let findings = analyze(&source, language);
        let expected = expectations(&source);
        assert!(
            !expected.is_empty(),
            "{} declares no expectation",
            path.display()
        );
        for (line, rule) in expected {
            expected_total += 1;
            let slot = &mut per_language[usize::from(language == SourceLanguage::Go)];
            slot.0 += 1;
            if findings.iter().any(|f| f.line == line && f.rule == rule) {
                found_total += 1;
                slot.1 += 1;
            } else {
                missed.push(format!(
                    "{}:{line} {rule}",
                    path.file_name().unwrap().to_string_lossy()
                ));
            }
        }
    }
    #[expect(clippy::cast_precision_loss, reason = "counts are small")]
    let recall = found_total as f64 / expected_total as f64;
    println!(
        "must-catch recall: {found_total}/{expected_total} = {recall:.3} (python {}/{}, go {}/{})",
        per_language[0].1, per_language[0].0, per_language[1].1, per_language[1].0
    );
    for miss in &missed {
        println!("missed: {miss}");
    }
    assert!(
        recall >= 0.90,
        "recall {recall:.3} < 0.90; missed: {missed:#?}"
    );
}

#[test]
fn clean_files_have_no_finding() {
    let files = corpus("clean");
    assert!(
        files.len() >= 10,
        "the clean corpus has {} files",
        files.len()
    );
    let mut dirty = Vec::new();
    for path in files {
        let language = SourceLanguage::from_path(&path).unwrap();
        for finding in analyze(&std::fs::read(&path).unwrap(), language) {
            dirty.push(format!(
                "{}:{}:{} {} {}",
                path.file_name().unwrap().to_string_lossy(),
                finding.line,
                finding.column,
                finding.rule,
                finding.message
            ));
        }
    }
    assert!(
        dirty.is_empty(),
        "findings in clean files:\n{}",
        dirty.join("\n")
    );
}
