//! `static-analysis`, seed 000's builtin: Python or Go source in, security findings out
//! (rule, kind, severity, confidence, line, column, message, CWE). A read: it runs nothing and
//! changes nothing, so it needs neither approval nor idempotency.

use purko_analysis::SourceLanguage;
use purko_protocol::{Code, Marks, Observation, ToolSpec};
use serde_json::{Value, json};

/// The builtin's name in seed 000.
pub const STATIC_ANALYSIS: &str = "static-analysis";

/// The tool as the catalogue lists it.
pub fn spec(name: &str, description: Option<&str>) -> ToolSpec {
    let mut spec = ToolSpec::new(
        name.to_owned(),
        description.unwrap_or(
            "Reads Python or Go source and lists its security weaknesses (eval and exec, shell and SQL injection, hardcoded secrets, TLS verification off, unsafe deserialization, weak hashes and ciphers, ...), each with rule, kind, severity, confidence, line, column, message and CWE. Runs nothing.",
        ),
    );
    spec.input_schema = Some(json!({
        "type": "object",
        "properties": {
            "code": {"type": "string", "description": "the source to analyze"},
            "language": {"type": "string", "enum": ["python", "go"]},
        },
        "required": ["code", "language"],
        "additionalProperties": false,
    }));
    spec.marks = Marks {
        read_only: true,
        ..Marks::default()
    };
    spec
}

/// Analyzes the call's source. The arguments were validated against [`spec`]'s schema.
pub async fn run(arguments: &Value) -> Observation {
    let code = arguments
        .get("code")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_owned();
    let language = match arguments.get("language").and_then(Value::as_str) {
        Some("python") => SourceLanguage::Python,
        Some("go") => SourceLanguage::Go,
        other => {
            return Observation::error(
                Code::ValidationFailed,
                format!("language {other:?} is not one this tool reads"),
                "call again with language set to python or go",
            );
        }
    };
    // Parsing is CPU work: off the runtime's threads.
    match tokio::task::spawn_blocking(move || purko_analysis::analyze(code.as_bytes(), language))
        .await
    {
        Ok(findings) => Observation::success(json!({
            "count": findings.len(),
            "findings": findings,
        })),
        Err(e) => {
            tracing::error!("the analyzer failed: {e}");
            Observation::error(
                Code::Internal,
                "the analyzer could not read this source",
                "try again with a smaller piece of the source; if it fails the same way, tell the operator",
            )
        }
    }
}
