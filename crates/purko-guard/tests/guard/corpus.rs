//! Classification accuracy on a labelled corpus of real tool definitions (tests/data/README.md
//! says where they come from). The bar: no tool that writes or sends out is ever classified
//! read; `sends_out` recall at least 0.95; reads classified read at least 0.85.
#![allow(
    clippy::cast_precision_loss,
    reason = "counts of a few hundred tools are exact in f64"
)]

use std::collections::BTreeMap;

use purko_guard::{DestinationMap, infer};
use purko_protocol::{Kind, ToolSpec};
use serde::Deserialize;

#[derive(Deserialize)]
struct Corpus {
    tools: Vec<Labelled>,
}

#[derive(Deserialize)]
struct Labelled {
    #[serde(flatten)]
    tool: ToolSpec,
    expected: Kind,
    origin: String,
}

fn corpus() -> Vec<Labelled> {
    let text = include_str!("../data/tool_corpus.json");
    let corpus: Corpus = serde_json::from_str(text).expect("the corpus is valid JSON");
    corpus.tools
}

#[test]
fn the_corpus_is_classified_within_the_bar() {
    let tools = corpus();
    assert!(
        tools.len() >= 200,
        "the corpus holds {} tools, fewer than 200",
        tools.len()
    );
    let mut confusion: BTreeMap<(Kind, Kind), usize> = BTreeMap::new();
    let mut unsafe_reads = Vec::new();
    let mut misses = Vec::new();
    for labelled in &tools {
        let destinations = DestinationMap::from_schema(labelled.tool.input_schema.as_ref());
        let got = infer(&labelled.tool, &destinations);
        *confusion.entry((labelled.expected, got.kind)).or_default() += 1;
        if got.kind != labelled.expected {
            let line = format!(
                "  {} ({}): expected {}, got {} [{}] because {}",
                labelled.tool.name,
                labelled.origin,
                labelled.expected,
                got.kind,
                got.source,
                got.reason
            );
            if got.kind == Kind::Read {
                unsafe_reads.push(line.clone());
            }
            misses.push(line);
        }
    }
    let count = |expected: Kind, got: Kind| confusion.get(&(expected, got)).copied().unwrap_or(0);
    let total = |expected: Kind| Kind::ALL.iter().map(|g| count(expected, *g)).sum::<usize>();
    let recall = |kind: Kind| count(kind, kind) as f64 / total(kind).max(1) as f64;
    let correct: usize = Kind::ALL.iter().map(|k| count(*k, *k)).sum();
    println!(
        "corpus: {} tools, {} classified as labelled ({:.3})",
        tools.len(),
        correct,
        correct as f64 / tools.len() as f64
    );
    println!("expected \\ got   read  write  sends_out");
    for expected in Kind::ALL {
        println!(
            "{:<14} {:>6} {:>6} {:>10}   recall {:.3}",
            expected.as_str(),
            count(*expected, Kind::Read),
            count(*expected, Kind::Write),
            count(*expected, Kind::SendsOut),
            recall(*expected)
        );
    }
    println!("misclassified:\n{}", misses.join("\n"));
    assert!(
        unsafe_reads.is_empty(),
        "tools that write or send out were classified read:\n{}",
        unsafe_reads.join("\n")
    );
    assert!(
        recall(Kind::SendsOut) >= 0.95,
        "sends_out recall {:.3} is under 0.95",
        recall(Kind::SendsOut)
    );
    assert!(
        recall(Kind::Read) >= 0.85,
        "read recall {:.3} is under 0.85",
        recall(Kind::Read)
    );
}
