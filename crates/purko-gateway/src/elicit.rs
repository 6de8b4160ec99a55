//! Approvals by MCP elicitation (DESIGN.md section 6): a call that needs a person's yes is put
//! to the person at the client's own interface, while the approval is also open on the API and
//! the CLI; the first answer wins.
//!
//! - Protocol 2025-11-25 and older: the gateway sends `elicitation/create` to the client while
//!   the call waits ([`ClientAsker`], an engine [`Asker`]).
//! - Protocol 2026-07-28, which forbids requests from server to client: the call answers with
//!   an `InputRequired` result carrying the same form and the approval id as `requestState`;
//!   the client asks its person and calls again with the answer in `inputResponses`, which is
//!   recorded on that approval before the call goes on.
//!
//! On every revision, a call that waits sends `notifications/progress` when its request carried
//! a `progressToken`, so the client sees why it waits (and keeps its timeout from firing).

use std::time::Duration;

use purko_engine::{AskFuture, Asker, WaitingFuture, now_ms};
use purko_protocol::{Approval, ApprovalId, ApprovalScope};
use purko_store::Answer;
use rmcp::RoleServer;
use rmcp::model::{
    ClientCapabilities, ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationSchema, InputRequest, InputRequests, InputRequiredResult, InputResponses,
    ProgressNotification, ProgressNotificationParam, ProgressToken, ServerJsonRpcMessage,
};
use rmcp::service::Peer;
use serde_json::{Value, json};
use tokio::sync::mpsc;

/// Who answered, as the approval records it.
pub const BY: &str = "elicitation";
/// The reason recorded when the person declines or dismisses the form.
pub const DECLINED: &str = "declined in the client";
/// The key of the approval's form among an `InputRequired` result's requests.
pub const INPUT_KEY: &str = "purko_approval";
/// How often a waiting call tells its client why it waits.
pub const PROGRESS_EVERY: Duration = Duration::from_secs(5);
/// `requestState` prefix: the rest is the approval id, a dot and Purko's seal of it.
const STATE_PREFIX: &str = "purko.approval:";

/// Whether the client can show a form (a client that declares elicitation without naming a
/// mode can, as the spec keeps it for older clients).
pub fn client_can_elicit(capabilities: Option<&ClientCapabilities>) -> bool {
    capabilities
        .and_then(|c| c.elicitation.as_ref())
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

/// The message a person reads: the tool, its kind and where the kind comes from, the
/// arguments, and why it needs a yes.
pub fn message(approval: &Approval) -> String {
    let arguments = serde_json::to_string_pretty(&approval.arguments)
        .unwrap_or_else(|_| approval.arguments.to_string());
    let why = if approval.reasons.is_empty() {
        String::new()
    } else {
        format!("\nWhy it needs a yes: {}", approval.reasons.join("; "))
    };
    let reason = if approval.kind_reason.is_empty() {
        String::new()
    } else {
        format!(": {}", approval.kind_reason)
    };
    format!(
        "Agent {} wants to call {} ({} tool, kind from {}{reason}).{why}\nArguments:\n{arguments}\nApprove this call once? (Approval {}; it can also be answered with `purko approvals`.)",
        approval.agent,
        approval.tool,
        approval.kind.as_str(),
        approval.kind_source.as_str(),
        approval.id,
    )
}

/// The form: a yes/no `approve` and an optional `comment`.
pub fn form(approval: &Approval) -> ElicitRequestParams {
    let schema = json!({
        "type": "object",
        "properties": {
            "approve": {
                "type": "boolean",
                "title": "Approve",
                "description": format!("Run {} with these arguments, once", approval.tool),
                "default": false,
            },
            "comment": {
                "type": "string",
                "title": "Comment",
                "description": "Optional: why (recorded with the answer)",
            },
        },
        "required": ["approve"],
    });
    let Value::Object(schema) = schema else {
        unreachable!("a JSON object literal")
    };
    ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: message(approval),
        requested_schema: ElicitationSchema::from_json_schema(schema)
            .expect("the approval form is a valid elicitation schema"),
    }
}

/// The approval's answer from the person's answer to the form: only an accepted form with
/// `approve: true` is a yes; a decline, a cancel or `approve: false` is a no.
pub fn answer_of(result: &ElicitResult) -> Answer {
    let content = result.content.as_ref();
    let comment = content
        .and_then(|c| c.get("comment"))
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned);
    let yes = matches!(result.action, ElicitationAction::Accept)
        && content
            .and_then(|c| c.get("approve"))
            .and_then(Value::as_bool)
            .unwrap_or(false);
    if yes {
        Answer::Approve {
            scope: ApprovalScope::Once,
            comment,
            by: BY.to_owned(),
        }
    } else {
        Answer::Reject {
            reason: Some(
                comment.map_or_else(|| DECLINED.to_owned(), |c| format!("{DECLINED}: {c}")),
            ),
            by: BY.to_owned(),
        }
    }
}

/// The client a call came from: asks its person through `elicitation/create` (protocol
/// 2025-11-25 and older, when the client can), and sends progress while the call waits (when
/// the request carried a token).
pub struct ClientAsker {
    /// The client to put the approval's form to, when it can show one.
    pub elicit: Option<Peer<RoleServer>>,
    /// The request's progress token and where its progress goes.
    pub progress: Option<(ProgressToken, ProgressTo)>,
}

/// Where a waiting call's progress goes.
pub enum ProgressTo {
    /// The client's connection or MCP session.
    Peer(Peer<RoleServer>),
    /// The event stream of the HTTP request the call came on (the fast path of `http.rs`).
    Stream(mpsc::Sender<ServerJsonRpcMessage>),
}

impl ProgressTo {
    /// Sends one notification; false once the client is gone.
    async fn send(&self, progress: ProgressNotificationParam) -> bool {
        match self {
            Self::Peer(peer) => peer.notify_progress(progress).await.is_ok(),
            Self::Stream(events) => {
                let notification = ProgressNotification::new(progress);
                events
                    .send(ServerJsonRpcMessage::notification(notification.into()))
                    .await
                    .is_ok()
            }
        }
    }
}

impl Asker for ClientAsker {
    fn ask<'a>(&'a self, approval: &'a Approval) -> AskFuture<'a> {
        Box::pin(async move {
            let peer = self.elicit.as_ref()?;
            let left = u64::try_from(approval.expires_at_ms.saturating_sub(now_ms())).ok()?;
            let answered = peer
                .create_elicitation_with_timeout(form(approval), Some(Duration::from_millis(left)))
                .await;
            match answered {
                Ok(result) => Some(answer_of(&result)),
                Err(e) => {
                    // The call keeps waiting for the dashboard or the CLI.
                    tracing::warn!(approval = %approval.id, "the client could not ask its person: {e}");
                    None
                }
            }
        })
    }

    fn while_waiting<'a>(&'a self, approval: &'a Approval) -> WaitingFuture<'a> {
        Box::pin(async move {
            let Some((token, to)) = &self.progress else {
                return std::future::pending().await;
            };
            #[expect(clippy::cast_precision_loss, reason = "seconds of an approval's life")]
            let seconds = |ms: i64| (ms.max(0) / 1000) as f64;
            let total = seconds(
                approval
                    .expires_at_ms
                    .saturating_sub(approval.created_at_ms),
            );
            let mut every = tokio::time::interval(PROGRESS_EVERY);
            loop {
                every.tick().await;
                let now = now_ms();
                let progress = ProgressNotificationParam::new(
                    token.clone(),
                    seconds(now.saturating_sub(approval.created_at_ms)),
                )
                .with_total(total)
                .with_message(waiting_message(approval, now));
                if !to.send(progress).await {
                    return;
                }
            }
        })
    }
}

/// What a waiting call tells its client.
pub fn waiting_message(approval: &Approval, now: i64) -> String {
    let left = approval.expires_at_ms.saturating_sub(now).max(0) / 1000;
    format!(
        "{} waits for a person's yes on approval {} ({left} s left): `purko approvals approve {}` or the dashboard answers it",
        approval.tool, approval.id, approval.id
    )
}

/// Protocol 2026-07-28: the `InputRequired` answer to a call whose approval is waiting; `seal`
/// is Purko's seal of the approval, which comes back in the retry's `requestState`.
pub fn input_required(approval: &Approval, seal: &str) -> InputRequiredResult {
    let mut requests = InputRequests::new();
    requests.insert(
        INPUT_KEY.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(form(approval))),
    );
    InputRequiredResult::new(
        Some(requests),
        Some(format!("{STATE_PREFIX}{}.{seal}", approval.id)),
    )
}

/// The approval a retry's `requestState` names and the seal it carries, if it has our shape
/// (whether the seal is Purko's is the engine's to say).
pub fn approval_of_state(state: &str) -> Option<(ApprovalId, &str)> {
    let (id, seal) = state.strip_prefix(STATE_PREFIX)?.rsplit_once('.')?;
    Some((id.parse().ok()?, seal))
}

/// The person's answer among a retry's `inputResponses`.
pub fn response_of(responses: Option<&InputResponses>) -> Option<Answer> {
    let value = responses?.get(INPUT_KEY)?;
    let result: ElicitResult = serde_json::from_value(value.clone()).ok()?;
    Some(answer_of(&result))
}

#[cfg(test)]
mod tests {
    use rmcp::model::ElicitationAction;
    use serde_json::json;

    use super::*;

    fn result(action: ElicitationAction, content: Option<Value>) -> ElicitResult {
        let mut r = ElicitResult::new(action);
        r.content = content;
        r
    }

    #[test]
    fn only_an_accepted_yes_approves_and_everything_else_is_declined_in_the_client() {
        let yes = answer_of(&result(
            ElicitationAction::Accept,
            Some(json!({"approve": true, "comment": " fine "})),
        ));
        assert!(matches!(
            yes,
            Answer::Approve { scope: ApprovalScope::Once, comment: Some(ref c), ref by }
                if c == "fine" && by == BY
        ));
        for (action, content) in [
            (ElicitationAction::Accept, Some(json!({"approve": false}))),
            (ElicitationAction::Accept, None),
            (ElicitationAction::Decline, None),
            (ElicitationAction::Cancel, None),
        ] {
            let no = answer_of(&result(action, content));
            assert!(
                matches!(no, Answer::Reject { reason: Some(ref r), .. } if r == DECLINED),
                "{no:?}"
            );
        }
    }

    #[test]
    fn the_request_state_names_only_our_approvals() {
        let id = ApprovalId::new(&ulid::Ulid::generate().to_string());
        let state = format!("{STATE_PREFIX}{id}.00ff");
        assert_eq!(approval_of_state(&state), Some((id.clone(), "00ff")));
        assert_eq!(approval_of_state(&format!("{STATE_PREFIX}{id}")), None);
        assert_eq!(approval_of_state("purko.approval:a_nope.00ff"), None);
        assert_eq!(approval_of_state("something else"), None);
    }
}
