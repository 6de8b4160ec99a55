//! The analyzer and the pre-execution check in process, on 200-line snippets: Python made of
//! the must-catch corpus (many findings), Go from the clean corpus (Go's `net/url`). The
//! target is under 10 ms per snippet.
//!
//! Run with `cargo bench -p purko-analysis --bench analyze`.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, criterion_group, criterion_main};
use purko_analysis::{CheckList, CodeLanguage, SourceLanguage, analyze, check};

fn corpus() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/corpus"))
}

/// The first 200 lines of the files in `folder` with `extension`, in name order.
fn snippet(folder: &str, prefix: &str, extension: &str) -> String {
    let mut files: Vec<_> = std::fs::read_dir(corpus().join(folder))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.extension().is_some_and(|e| e == extension)
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .collect();
    files.sort();
    let text: String = files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    let mut lines: Vec<&str> = text.lines().take(200).collect();
    lines.push("");
    lines.join("\n")
}

fn bench(c: &mut Criterion) {
    let python = snippet("must_catch", "py_", "py");
    let go = snippet("clean", "go_net_url", "go");
    assert_eq!(python.lines().count(), 200);
    assert_eq!(go.lines().count(), 200);
    let list = CheckList::default();
    let bash = "set -eu\nfor f in *.txt; do\n  grep -c foo \"$f\" | sort\ndone\n".repeat(50);

    let mut group = c.benchmark_group("analyze");
    group.bench_function("python_200_lines", |b| {
        b.iter(|| analyze(black_box(python.as_bytes()), SourceLanguage::Python));
    });
    group.bench_function("go_200_lines", |b| {
        b.iter(|| analyze(black_box(go.as_bytes()), SourceLanguage::Go));
    });
    group.finish();
    let mut group = c.benchmark_group("check");
    group.bench_function("python_200_lines", |b| {
        b.iter(|| check(black_box(&python), CodeLanguage::Python, &list));
    });
    group.bench_function("bash_200_lines", |b| {
        b.iter(|| check(black_box(&bash), CodeLanguage::Bash, &list));
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
