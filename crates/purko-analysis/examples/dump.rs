//! Prints the findings for each file given: `cargo run -p purko-analysis --example dump FILE...`.
#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a developer's tool"
)]
fn main() {
    for path in std::env::args().skip(1) {
        let path = std::path::PathBuf::from(path);
        let language = purko_analysis::SourceLanguage::from_path(&path).unwrap();
        for f in purko_analysis::analyze(&std::fs::read(&path).unwrap(), language) {
            println!(
                "{}:{}:{} {} {} {} {}",
                path.display(),
                f.line,
                f.column,
                f.severity.as_str(),
                f.rule,
                f.kind.as_str(),
                f.message
            );
        }
    }
}
