//! Observations as `CallToolResult`s. A model reads the text; a program reads
//! `structuredContent`, which is always the whole observation (status, code, decision id,
//! approval id), so nothing the HTTP API would say is lost on MCP.

use std::fmt::Write;

use purko_protocol::{Observation, Status};
use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

/// The MCP answer to a guarded call: success carries the tool's answer as JSON text; any other
/// status is `isError: true` with the code, message and remediation as text.
pub fn call_tool_result(observation: &Observation) -> CallToolResult {
    let structured = serde_json::to_value(observation).unwrap_or(Value::Null);
    let mut result = if observation.status == Status::Success {
        let text = match &observation.observation {
            Some(Value::String(text)) => text.clone(),
            Some(value) => value.to_string(),
            None => "null".to_owned(),
        };
        CallToolResult::success(vec![ContentBlock::text(text)])
    } else {
        CallToolResult::error(vec![ContentBlock::text(refusal_text(observation))])
    };
    result.structured_content = Some(structured);
    result
}

fn refusal_text(observation: &Observation) -> String {
    let status = serde_json::to_value(observation.status)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let code = observation
        .code
        .map_or_else(|| status.to_uppercase(), |c| c.to_string());
    let mut text = format!(
        "{code}: {}",
        observation
            .message
            .as_deref()
            .unwrap_or("the call did not succeed")
    );
    if let Some(remediation) = &observation.remediation {
        text.push_str("\nremediation: ");
        text.push_str(remediation);
    }
    if let Some(id) = &observation.approval_id {
        let _ = write!(text, "\napproval: {id}");
    }
    if let Some(id) = &observation.decision_id {
        let _ = write!(text, "\ndecision: {id}");
    }
    text
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use purko_protocol::Code;
    use serde_json::json;

    use super::*;

    #[test]
    fn a_success_is_its_json_and_a_refusal_is_an_error_with_code_and_remediation() {
        let ok = call_tool_result(&Observation::success(json!({"items": [1]})));
        assert_eq!(ok.is_error, Some(false));
        let wire = serde_json::to_value(&ok).expect("serialises");
        assert_eq!(wire["content"][0]["text"], r#"{"items":[1]}"#);
        assert_eq!(
            wire["structuredContent"]["observation"],
            json!({"items": [1]})
        );

        let refused = Observation::failure(
            Status::Denied,
            Code::AutonomyBlocked,
            "restricted agents only read",
            "ask a person to do it",
        );
        let no = call_tool_result(&refused);
        assert_eq!(no.is_error, Some(true));
        let wire = serde_json::to_value(&no).expect("serialises");
        assert_eq!(
            wire["content"][0]["text"],
            "AUTONOMY_BLOCKED: restricted agents only read\nremediation: ask a person to do it"
        );
        assert_eq!(wire["structuredContent"]["status"], "denied");
    }
}
