//! Observations as `CallToolResult`s. A model reads the content (an MCP server's own blocks, or
//! the answer as text); a program reads `structuredContent`, which is always the whole observation (status, code, decision id,
//! approval id), so nothing the HTTP API would say is lost on MCP.

use std::fmt::Write;

use purko_protocol::{Observation, Status};
use rmcp::model::{CallToolResult, ContentBlock};
use serde::Deserialize;
use serde_json::Value;

/// The MCP answer to a guarded call: success carries an MCP server's content blocks as the
/// server sent them, and any other tool's answer as JSON text; any other status is
/// `isError: true` with the code, message and remediation as text.
pub fn call_tool_result(observation: &Observation) -> CallToolResult {
    let structured = serde_json::to_value(observation).unwrap_or(Value::Null);
    let mut result = if observation.status == Status::Success {
        let content = observation
            .observation
            .as_ref()
            .and_then(mcp_content)
            .unwrap_or_else(|| {
                let text = match &observation.observation {
                    Some(Value::String(text)) => text.clone(),
                    Some(value) => value.to_string(),
                    None => "null".to_owned(),
                };
                vec![ContentBlock::text(text)]
            });
        CallToolResult::success(content)
    } else {
        CallToolResult::error(vec![ContentBlock::text(refusal_text(observation))])
    };
    result.structured_content = Some(structured);
    result
}

/// The content blocks of an answer in MCP's own shape (`content`, and `structuredContent` if
/// any), as an MCP server's tool result is observed: text, images, audio, links and resources
/// reach the client as the server sent them, not as JSON inside a text block.
fn mcp_content(answer: &Value) -> Option<Vec<ContentBlock>> {
    let answer = answer.as_object()?;
    if !answer
        .keys()
        .all(|key| key == "content" || key == "structuredContent")
    {
        return None;
    }
    Vec::<ContentBlock>::deserialize(answer.get("content")?).ok()
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

    #[test]
    fn an_mcp_servers_content_reaches_the_client_as_it_sent_it() {
        let answer = json!({
            "content": [
                {"type": "text", "text": "Echo: hi"},
                {"type": "image", "data": "aGk=", "mimeType": "image/png"}
            ],
            "structuredContent": {"n": 1}
        });
        let result = call_tool_result(&Observation::success(answer.clone()));
        let wire = serde_json::to_value(&result).expect("serialises");
        assert_eq!(wire["content"], answer["content"]);
        assert_eq!(wire["structuredContent"]["observation"], answer);
        // Not MCP's shape (another key, or blocks MCP does not know): the JSON as text.
        for other in [
            json!({"content": [{"type": "text", "text": "x"}], "total": 1}),
            json!({"content": [{"type": "hologram"}]}),
        ] {
            let result = call_tool_result(&Observation::success(other.clone()));
            let wire = serde_json::to_value(&result).expect("serialises");
            assert_eq!(wire["content"][0]["text"], other.to_string());
        }
    }
}
