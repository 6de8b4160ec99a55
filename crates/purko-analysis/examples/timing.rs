//! Splits the analyzer's time into parsing and the rest, over the files given:
//! `cargo run --release -p purko-analysis --example timing FILE...`.

#![allow(
    clippy::print_stdout,
    clippy::unwrap_used,
    reason = "a developer's tool"
)]

use std::path::Path;
use std::time::Instant;

use purko_analysis::{SourceLanguage, analyze};

const ROUNDS: u32 = 5;

fn main() {
    let files: Vec<(SourceLanguage, Vec<u8>)> = std::env::args()
        .skip(1)
        .map(|p| {
            let language = SourceLanguage::from_path(Path::new(&p)).unwrap();
            (language, std::fs::read(&p).unwrap())
        })
        .collect();
    let mut python = tree_sitter::Parser::new();
    python
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .unwrap();
    let mut go = tree_sitter::Parser::new();
    go.set_language(&tree_sitter_go::LANGUAGE.into()).unwrap();
    let start = Instant::now();
    for _ in 0..ROUNDS {
        for (language, bytes) in &files {
            let parser = match language {
                SourceLanguage::Python => &mut python,
                SourceLanguage::Go => &mut go,
            };
            let _ = parser.parse(bytes, None);
        }
    }
    println!("parse only: {:?} per round", start.elapsed() / ROUNDS);
    let start = Instant::now();
    let mut findings = 0;
    for _ in 0..ROUNDS {
        for (language, bytes) in &files {
            findings += analyze(bytes, *language).len();
        }
    }
    println!(
        "analyze:    {:?} per round ({} findings)",
        start.elapsed() / ROUNDS,
        findings / ROUNDS as usize
    );
}
