//! The approval gate (DESIGN.md section 6): an `ask` becomes a stored approval before anyone is
//! asked; the same call sent again finds the same approval; a yes for the session stands for
//! the same tool and arguments again; the webhook hears of every new approval; a connected
//! client that can ask its person (MCP elicitation) is asked while the approval is also open on
//! the API and the CLI, and the first answer wins.

use std::future::Future;
use std::pin::Pin;

use purko_protocol::{Approval, ApprovalStatus, Code, Evaluation, Observation, Status};
use purko_store::{Answer, Decided};
use serde_json::json;

use crate::agent::{AgentRuntime, Webhook};
use crate::clock::now_ms;
use crate::engine::{CallRequest, Engine, approval_for, call_key};
use crate::error::Result;
use crate::once::arguments_digest;

/// What [`Asker::ask`] returns: a boxed future, so the trait can be used as `dyn Asker`.
pub type AskFuture<'a> = Pin<Box<dyn Future<Output = Option<Answer>> + Send + 'a>>;

/// What [`Asker::while_waiting`] returns.
pub type WaitingFuture<'a> = Pin<Box<dyn Future<Output = ()> + Send + 'a>>;

/// The channel a call came from (the MCP gateway's client): it can put an approval to a person
/// right there (elicitation), racing the store, whichever answer comes first being the answer;
/// and it can keep its caller informed while the call waits (progress notifications).
pub trait Asker: Send + Sync {
    /// Asks the person about `approval`. `None` means this channel cannot answer (the client
    /// cannot elicit, or the request failed): the call then keeps waiting on the other channels.
    /// Never called when the agent has elicitation turned off.
    fn ask<'a>(&'a self, approval: &'a Approval) -> AskFuture<'a>;

    /// Runs for as long as the call waits for any answer and is dropped when one comes; its
    /// end does not end the wait. The default does nothing.
    fn while_waiting<'a>(&'a self, approval: &'a Approval) -> WaitingFuture<'a> {
        let _ = approval;
        Box::pin(std::future::pending())
    }
}

/// Whether a call that needed a yes may go on.
#[derive(Debug)]
pub enum Gate {
    /// It may, on the strength of this approval (or of a session grant: `None`).
    Go(Option<Box<Approval>>),
    /// It may not, or not yet: this is the answer.
    Stop(Observation),
}

pub async fn gate(
    engine: &Engine,
    agent: &AgentRuntime,
    request: &CallRequest,
    evaluation: &Evaluation,
    asker: Option<&dyn Asker>,
) -> Result<Gate> {
    let store = engine.store().as_ref();
    let digest = arguments_digest(&request.arguments);
    if store
        .has_grant(&agent.key, &request.session, &request.name, &digest)
        .await?
    {
        return Ok(Gate::Go(None));
    }
    let now = now_ms();
    let approval = match store
        .latest_approval_for(&call_key(agent, request, &digest))
        .await?
    {
        Some(a) if a.status == ApprovalStatus::Approved => return Ok(Gate::Go(Some(Box::new(a)))),
        Some(a) if a.status == ApprovalStatus::Rejected => {
            return Ok(Gate::Stop(answered(&a, evaluation)));
        }
        Some(a) if a.status == ApprovalStatus::Pending && a.expires_at_ms > now => a,
        _ => {
            let approval = approval_for(agent, request, evaluation, digest, now);
            store.create_approval(&approval).await?;
            if let Some(webhook) = &agent.webhook {
                notify(engine.webhooks().clone(), webhook.clone(), &approval);
            }
            approval
        }
    };
    if !request.wait.unwrap_or(agent.wait) {
        return Ok(Gate::Stop(pending(&approval, evaluation)));
    }
    let approval = match asker {
        None => store.wait_approval(&approval.id).await?,
        Some(asker) => ask_and_wait(engine, asker, &approval, agent.elicitation).await?,
    };
    Ok(match approval.status {
        ApprovalStatus::Approved => Gate::Go(Some(Box::new(approval))),
        ApprovalStatus::Pending => Gate::Stop(pending(&approval, evaluation)),
        ApprovalStatus::Rejected | ApprovalStatus::Expired => {
            Gate::Stop(answered(&approval, evaluation))
        }
    })
}

/// Waits for the stored answer while the asker puts the approval to its person (when
/// `elicitation` allows) and keeps its caller informed; the asker's answer goes through the
/// store like any other (first answer wins), and what counts is the approval as it then stands.
async fn ask_and_wait(
    engine: &Engine,
    asker: &dyn Asker,
    approval: &Approval,
    elicitation: bool,
) -> Result<Approval> {
    let store = engine.store().as_ref();
    let stored = store.wait_approval(&approval.id);
    let asked = async {
        if elicitation {
            asker.ask(approval).await
        } else {
            None
        }
    };
    let informing = asker.while_waiting(approval);
    tokio::pin!(stored, asked, informing);
    let mut asking = true;
    let mut informed = false;
    loop {
        tokio::select! {
            decided = &mut stored => return Ok(decided?),
            answer = &mut asked, if asking => {
                asking = false;
                if let Some(answer) = answer {
                    return match engine.answer(&approval.id, answer).await? {
                        Decided::Now(a) | Decided::Already(a) => Ok(a),
                        Decided::NotFound => Ok(stored.await?),
                    };
                }
            }
            () = &mut informing, if !informed => informed = true,
        }
    }
}

fn pending(approval: &Approval, evaluation: &Evaluation) -> Observation {
    Observation::pending(
        format!(
            "{} needs a person's yes: approval {} is waiting",
            approval.tool, approval.id
        ),
        format!(
            "call {} again with the same session, step and arguments to get its result once a person has answered",
            approval.tool
        ),
    )
    .with_approval(approval.id.clone())
        .with_decision(evaluation.decision_id.clone())
}

/// The answer to a call whose approval was refused or ran out.
fn answered(approval: &Approval, evaluation: &Evaluation) -> Observation {
    let (code, message, remediation) = if approval.status == ApprovalStatus::Expired {
        (
            Code::ApprovalExpired,
            format!("nobody answered approval {} in time", approval.id),
            format!(
                "call {} again to ask again, or ask the user to approve it",
                approval.tool
            ),
        )
    } else {
        let why = approval
            .comment
            .as_deref()
            .map(|c| format!(": {c}"))
            .unwrap_or_default();
        (
            Code::ApprovalRejected,
            format!("a person rejected this call of {}{why}", approval.tool),
            format!(
                "do not retry this call; change the plan or ask the user how to go on without {}",
                approval.tool
            ),
        )
    };
    Observation::failure(Status::Rejected, code, message, remediation)
        .with_approval(approval.id.clone())
        .with_decision(evaluation.decision_id.clone())
}

/// Posts the new approval to the webhook, without holding up the call: a webhook that is slow
/// or down is logged, never fatal.
fn notify(client: reqwest::Client, webhook: Webhook, approval: &Approval) {
    let text = format!(
        "Purko: agent {} wants to call {} ({}, {}: {}). Arguments: {}. Approve with `purko approvals approve {}` or reject with `purko approvals reject {}`; it expires in {} s.",
        approval.agent,
        approval.tool,
        approval.kind.as_str(),
        approval.kind_source.as_str(),
        approval.kind_reason,
        serde_json::to_string(&approval.arguments).unwrap_or_default(),
        approval.id,
        approval.id,
        (approval.expires_at_ms - approval.created_at_ms) / 1000,
    );
    let body = json!({
        "type": "approval.created",
        "text": text,
        "approval": approval,
    });
    let id = approval.id.clone();
    tokio::spawn(async move {
        let mut request = client.post(&webhook.url).json(&body);
        for (name, value) in &webhook.headers {
            request = request.header(name, value);
        }
        match request.send().await {
            Ok(r) if r.status().is_success() => {}
            Ok(r) => tracing::warn!(approval = %id, "the approval webhook answered {}", r.status()),
            Err(e) => tracing::warn!(approval = %id, "cannot reach the approval webhook: {e}"),
        }
    });
}
