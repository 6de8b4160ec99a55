//! Human approvals (DESIGN.md section 6). An approval is stored before anyone is asked, so a
//! restart loses nothing; the first answer wins; what runs is exactly what was approved, which
//! the argument digest pins down.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{DecisionId, Kind, KindSource, Signal};

/// The id of one approval: `a_<ULID>`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct ApprovalId(String);

/// A string that is not an approval id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("'{0}' is not an approval id; an approval id looks like a_01JH8X3K9Q7B2R5V0N4M6T1YZC")]
pub struct ApprovalIdError(String);

impl ApprovalId {
    /// The id for a ULID string.
    pub fn new(ulid: &str) -> Self {
        Self(format!("a_{ulid}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromStr for ApprovalId {
    type Err = ApprovalIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let ok = s.strip_prefix("a_").is_some_and(|u| {
            u.len() == 26
                && u.bytes().all(|b| {
                    b.is_ascii_digit() || (b.is_ascii_uppercase() && !b"ILOU".contains(&b))
                })
        });
        if ok {
            Ok(Self(s.to_owned()))
        } else {
            Err(ApprovalIdError(s.chars().take(80).collect()))
        }
    }
}

impl TryFrom<String> for ApprovalId {
    type Error = ApprovalIdError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<ApprovalId> for String {
    fn from(id: ApprovalId) -> Self {
        id.0
    }
}

impl fmt::Display for ApprovalId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Where an approval stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Rejected,
    Expired,
}

impl ApprovalStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Rejected => "rejected",
            Self::Expired => "expired",
        }
    }
}

impl FromStr for ApprovalStatus {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "pending" => Ok(Self::Pending),
            "approved" => Ok(Self::Approved),
            "rejected" => Ok(Self::Rejected),
            "expired" => Ok(Self::Expired),
            other => Err(format!(
                "unknown approval status '{other}'; use pending, approved, rejected or expired"
            )),
        }
    }
}

/// How far a yes reaches.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalScope {
    /// This call only.
    #[default]
    Once,
    /// This call, and the same tool with the same arguments again in the same session.
    Session,
}

/// One question to a person: may this call run?
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Approval {
    pub id: ApprovalId,
    pub decision_id: DecisionId,
    /// `namespace/name`.
    pub agent: String,
    pub session: String,
    pub step: String,
    pub tool: String,
    pub kind: Kind,
    pub kind_source: KindSource,
    pub kind_reason: String,
    /// The inference signals behind the kind, so a person sees how sure it is.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kind_signals: Vec<Signal>,
    /// The exact payload that will run if approved.
    pub arguments: Value,
    /// Hex SHA-256 of the canonical JSON of `arguments`.
    pub arguments_digest: String,
    /// Why it needs a yes.
    pub reasons: Vec<String>,
    /// Unix milliseconds.
    pub created_at_ms: i64,
    pub expires_at_ms: i64,
    pub status: ApprovalStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<ApprovalScope>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_at_ms: Option<i64>,
    /// Who answered: `operator`, `cli`, `elicitation`, or `expiry`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decided_by: Option<String>,
    /// The approver's comment or the rejection's reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub comment: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_parse_only_in_their_shape() {
        let id = ApprovalId::new("01JH8X3K9Q7B2R5V0N4M6T1YZC");
        assert_eq!(id.as_str().parse::<ApprovalId>(), Ok(id.clone()));
        for bad in [
            "",
            "a_",
            "a_01JH8X3K9Q7B2R5V0N4M6T1YZU",
            "d_01JH8X3K9Q7B2R5V0N4M6T1YZC",
        ] {
            assert!(bad.parse::<ApprovalId>().is_err(), "{bad} parsed");
        }
    }
}
