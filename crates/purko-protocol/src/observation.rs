//! What a caller gets back from a guarded call (DESIGN.md section 5): a structured observation
//! the model can read and act on. A refusal is an observation like any other.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ApprovalId, Code, DecisionId};

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// The tool ran and answered.
    Success,
    /// The tool could not run or failed; `code` says why.
    Error,
    /// The policy refused the call.
    Denied,
    /// A person refused the call, or did not answer in time.
    Rejected,
    /// A person has not answered yet and the caller asked not to wait.
    Pending,
}

impl Status {
    /// The wire word, e.g. `pending`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Success => "success",
            Self::Error => "error",
            Self::Denied => "denied",
            Self::Rejected => "rejected",
            Self::Pending => "pending",
        }
    }
}

/// The answer to one guarded call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Observation {
    pub status: Status,
    /// The tool's answer, on success.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observation: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<Code>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// What the model can do next.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remediation: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_id: Option<DecisionId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<ApprovalId>,
    /// Seconds to wait before trying again (from `Retry-After`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
    /// The output was longer than the limit and was cut.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub truncated: bool,
    /// This is the stored observation of an earlier execution; nothing ran again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub replayed: bool,
}

impl Observation {
    /// A successful call's observation.
    pub fn success(observation: Value) -> Self {
        Self::bare(Status::Success, None, None, None).with_observation(observation)
    }

    /// A failure or refusal with its code, message and remediation.
    pub fn failure(
        status: Status,
        code: Code,
        message: impl Into<String>,
        remediation: impl Into<String>,
    ) -> Self {
        Self::bare(
            status,
            Some(code),
            Some(message.into()),
            Some(remediation.into()),
        )
    }

    /// A call waiting for a person: no code, since nothing failed.
    pub fn pending(message: impl Into<String>, remediation: impl Into<String>) -> Self {
        Self::bare(
            Status::Pending,
            None,
            Some(message.into()),
            Some(remediation.into()),
        )
    }

    /// An `error` observation.
    pub fn error(code: Code, message: impl Into<String>, remediation: impl Into<String>) -> Self {
        Self::failure(Status::Error, code, message, remediation)
    }

    fn bare(
        status: Status,
        code: Option<Code>,
        message: Option<String>,
        remediation: Option<String>,
    ) -> Self {
        Self {
            status,
            observation: None,
            code,
            message,
            remediation,
            decision_id: None,
            approval_id: None,
            retry_after_seconds: None,
            truncated: false,
            replayed: false,
        }
    }

    #[must_use]
    pub fn with_observation(mut self, observation: Value) -> Self {
        self.observation = Some(observation);
        self
    }

    #[must_use]
    pub fn with_decision(mut self, id: DecisionId) -> Self {
        self.decision_id = Some(id);
        self
    }

    #[must_use]
    pub fn with_approval(mut self, id: ApprovalId) -> Self {
        self.approval_id = Some(id);
        self
    }

    #[must_use]
    pub fn with_retry_after(mut self, seconds: u64) -> Self {
        self.retry_after_seconds = Some(seconds);
        self
    }

    /// Whether the tool ran and answered.
    pub fn is_success(&self) -> bool {
        self.status == Status::Success
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    #[test]
    fn an_error_serializes_as_designed() {
        let o = Observation::error(
            Code::ValidationFailed,
            "argument 'units' must be one of metric, imperial",
            "call send_report again with units set to metric or imperial",
        );
        assert_eq!(
            serde_json::to_value(&o).expect("serializes"),
            json!({
                "status": "error",
                "code": "VALIDATION_FAILED",
                "message": "argument 'units' must be one of metric, imperial",
                "remediation": "call send_report again with units set to metric or imperial",
            })
        );
    }

    #[test]
    fn flags_appear_only_when_set() {
        let mut o = Observation::success(json!({"n": 1}));
        o.replayed = true;
        let v = serde_json::to_value(&o).expect("serializes");
        assert_eq!(
            v,
            json!({"status": "success", "observation": {"n": 1}, "replayed": true})
        );
        let back: Observation = serde_json::from_value(v).expect("parses");
        assert_eq!(back, o);
    }
}
