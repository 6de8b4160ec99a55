//! The stable error codes of DESIGN.md section 5. They are the only failure vocabulary a model
//! or a script ever sees; internal error types are mapped onto them at the edges.

use serde::{Deserialize, Serialize};

/// A stable, machine-readable reason for a refusal or a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum Code {
    ToolNotFound,
    NoResult,
    ValidationFailed,
    DeniedByPolicy,
    AutonomyBlocked,
    DestinationRefused,
    EgressBlocked,
    ApprovalRejected,
    ApprovalExpired,
    DuplicateInProgress,
    IdempotencyMismatch,
    OutcomeUnknown,
    RateLimitExceeded,
    UpstreamTimeout,
    UpstreamError,
    UpstreamUnavailable,
    SandboxTimeout,
    SandboxLimit,
    CodeRejected,
    Internal,
}

impl Code {
    /// The wire spelling, e.g. `TOOL_NOT_FOUND`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ToolNotFound => "TOOL_NOT_FOUND",
            Self::NoResult => "NO_RESULT",
            Self::ValidationFailed => "VALIDATION_FAILED",
            Self::DeniedByPolicy => "DENIED_BY_POLICY",
            Self::AutonomyBlocked => "AUTONOMY_BLOCKED",
            Self::DestinationRefused => "DESTINATION_REFUSED",
            Self::EgressBlocked => "EGRESS_BLOCKED",
            Self::ApprovalRejected => "APPROVAL_REJECTED",
            Self::ApprovalExpired => "APPROVAL_EXPIRED",
            Self::DuplicateInProgress => "DUPLICATE_IN_PROGRESS",
            Self::IdempotencyMismatch => "IDEMPOTENCY_MISMATCH",
            Self::OutcomeUnknown => "OUTCOME_UNKNOWN",
            Self::RateLimitExceeded => "RATE_LIMIT_EXCEEDED",
            Self::UpstreamTimeout => "UPSTREAM_TIMEOUT",
            Self::UpstreamError => "UPSTREAM_ERROR",
            Self::UpstreamUnavailable => "UPSTREAM_UNAVAILABLE",
            Self::SandboxTimeout => "SANDBOX_TIMEOUT",
            Self::SandboxLimit => "SANDBOX_LIMIT",
            Self::CodeRejected => "CODE_REJECTED",
            Self::Internal => "INTERNAL",
        }
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::Code;

    #[test]
    fn wire_spelling_matches_serde() {
        for code in [Code::ToolNotFound, Code::DestinationRefused, Code::Internal] {
            let json = serde_json::to_value(code).expect("a code serializes");
            assert_eq!(json, code.as_str());
        }
    }
}
