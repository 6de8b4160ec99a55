//! A judged call as a person reads it: the call, where the kind came from (the file entry, the
//! catalogue mark, or each inference signal that fired and each that did not count), the
//! autonomy cell, the rules that matched, the destinations, the validation errors, and the
//! outcome. It only reads the `Evaluation`; it never judges again.

use std::fmt::Write;

use purko_protocol::{DestinationVerdict, Evaluation, KindSource};

use crate::infer::{claim, describe};

/// The readable account of one evaluation.
pub fn explain(e: &Evaluation) -> String {
    let mut out = String::new();
    let outcome = e.effect.as_str().to_uppercase();
    let code = e.code.map(|c| format!(" ({c})")).unwrap_or_default();
    let _ = writeln!(out, "decision {}: {outcome}{code}", e.decision_id);
    let args = serde_json::to_string(&e.arguments).unwrap_or_default();
    let args = if args.len() > 200 {
        format!("{}…", &args[..args.floor_char_boundary(200)])
    } else {
        args
    };
    let _ = writeln!(out, "  call        {} {args}", e.tool);
    match (e.kind, e.kind_source, &e.kind_reason) {
        (Some(kind), Some(source), Some(reason)) => {
            let from = match source {
                KindSource::You => "from tool_kinds.yaml, written by a person",
                KindSource::Assistant => "from tool_kinds.yaml, proposed by an assistant",
                KindSource::Catalogue => "from the catalogue's own marks",
                KindSource::Annotation => "inferred, with an MCP annotation deciding",
                KindSource::Inferred => "inferred from the tool's definition",
                KindSource::Unsure => "unsure: nothing could tell, so a write",
            };
            let _ = writeln!(out, "  kind        {kind}, {from} (source: {source})");
            let _ = writeln!(out, "              {reason}");
            for s in &e.kind_signals {
                match &s.ignored {
                    None => {
                        let _ = writeln!(out, "    + {}", claim(s));
                    }
                    Some(why) => {
                        let _ = writeln!(out, "    - {} does not count: {why}", describe(s));
                    }
                }
            }
        }
        _ => {
            let _ = writeln!(out, "  kind        unknown: no such tool");
        }
    }
    if !e.validation_errors.is_empty() {
        let _ = writeln!(out, "  arguments   do not fit the tool's schema:");
        for error in &e.validation_errors {
            let _ = writeln!(out, "    - {}", error.message);
        }
    }
    if let Some(cell) = e.autonomy_cell {
        let _ = writeln!(
            out,
            "  autonomy    {} × {} → {}",
            cell.level, cell.kind, cell.effect
        );
    } else {
        let _ = writeln!(out, "  autonomy    {} (not reached)", e.autonomy);
    }
    if e.matched_rules.is_empty() {
        let _ = writeln!(out, "  rules       none matched");
    } else {
        for (i, r) in e.matched_rules.iter().enumerate() {
            let label = if i == 0 {
                "  rules      "
            } else {
                "             "
            };
            let args: Vec<String> = r.args.iter().map(|(k, v)| format!("{k}={v}")).collect();
            let args = if args.is_empty() {
                String::new()
            } else {
                format!(", args {}", args.join(" "))
            };
            let reason = r
                .reason
                .as_deref()
                .map(|x| format!(": {x}"))
                .unwrap_or_default();
            let _ = writeln!(
                out,
                "{label} rule {} {} (tool '{}'{args}){reason}",
                r.rule, r.effect, r.tool_pattern
            );
        }
    }
    for d in &e.destinations {
        let verdict = match &d.verdict {
            DestinationVerdict::NotSendsOut => "refused: the tool does not send out".to_owned(),
            DestinationVerdict::Allowed { pattern } => format!("allowed by '{pattern}'"),
            DestinationVerdict::NotAllowed => "refused: not on the allow list".to_owned(),
            DestinationVerdict::Unchecked => "no allow list is set".to_owned(),
        };
        let _ = writeln!(
            out,
            "  destination {} = {} ({}); {verdict}",
            d.argument, d.value, d.because
        );
    }
    let _ = writeln!(out, "  outcome     {}", e.effect);
    for reason in &e.reasons {
        let _ = writeln!(out, "    - {reason}");
    }
    if let Some(remedy) = &e.remediation {
        let _ = writeln!(out, "  remedy      {remedy}");
    }
    let kinds = e
        .kinds_digest
        .as_deref()
        .map_or("none", |d| &d[..12.min(d.len())]);
    let inference = if e.inference { "on" } else { "off" };
    let _ = writeln!(
        out,
        "  judged by   kinds file {kinds}, inference {inference}, policy {}",
        &e.policy_digest[..8.min(e.policy_digest.len())]
    );
    out
}
