//! Decision ids: `d_<kinds>_<i|n>_<policy>_<ulid>`.
//!
//! `kinds` is the first 12 hex digits of the `tool_kinds.yaml` SHA-256 (12 zeros without a
//! file), `i` or `n` says whether inference was on, `policy` is the first 8 hex digits of the
//! digest of the effective rules and autonomy, and the ULID makes the id unique and sortable by
//! time. An id therefore tells, on its own, which kinds file and which policy judged the call.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

/// The id of one judgement.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct DecisionId(String);

/// A string that is not a decision id.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "'{0}' is not a decision id; a decision id looks like d_3f9a1c2b7e4d_i_8c1e22aa_01JH8X3K9Q7B2R5V0N4M6T1YZC"
)]
pub struct DecisionIdError(String);

const KINDS_LEN: usize = 12;
const POLICY_LEN: usize = 8;
const ULID_LEN: usize = 26;

impl DecisionId {
    /// Assembles an id from its parts. `kinds_digest` and `policy_digest` may be full hex
    /// digests: only their first 12 and 8 digits are used.
    pub fn new(
        kinds_digest: Option<&str>,
        inference: bool,
        policy_digest: &str,
        ulid: &str,
    ) -> Self {
        let kinds = kinds_digest.map_or("000000000000", |d| &d[..KINDS_LEN.min(d.len())]);
        let flag = if inference { 'i' } else { 'n' };
        let policy = &policy_digest[..POLICY_LEN.min(policy_digest.len())];
        Self(format!("d_{kinds}_{flag}_{policy}_{ulid}"))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 hex digits of the kinds file digest, or zeros.
    pub fn kinds_digest(&self) -> &str {
        &self.0[2..2 + KINDS_LEN]
    }

    /// Whether inference was on.
    pub fn inference(&self) -> bool {
        self.0.as_bytes()[2 + KINDS_LEN + 1] == b'i'
    }

    /// The first 8 hex digits of the policy digest.
    pub fn policy_digest(&self) -> &str {
        let start = 2 + KINDS_LEN + 3;
        &self.0[start..start + POLICY_LEN]
    }

    /// The ULID part.
    pub fn ulid(&self) -> &str {
        &self.0[self.0.len() - ULID_LEN..]
    }
}

impl FromStr for DecisionId {
    type Err = DecisionIdError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let bad = || DecisionIdError(s.chars().take(80).collect());
        let rest = s.strip_prefix("d_").ok_or_else(bad)?;
        let mut parts = rest.split('_');
        let (Some(kinds), Some(flag), Some(policy), Some(ulid), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return Err(bad());
        };
        let hex = |p: &str, len| {
            p.len() == len && p.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
        };
        let crockford = ulid.len() == ULID_LEN
            && ulid
                .bytes()
                .all(|b| b.is_ascii_digit() || (b.is_ascii_uppercase() && !b"ILOU".contains(&b)));
        if hex(kinds, KINDS_LEN)
            && matches!(flag, "i" | "n")
            && hex(policy, POLICY_LEN)
            && crockford
        {
            Ok(Self(s.to_owned()))
        } else {
            Err(bad())
        }
    }
}

impl TryFrom<String> for DecisionId {
    type Error = DecisionIdError;

    fn try_from(value: String) -> Result<Self, Self::Error> {
        value.parse()
    }
}

impl From<DecisionId> for String {
    fn from(id: DecisionId) -> Self {
        id.0
    }
}

impl fmt::Display for DecisionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;

    const ULID: &str = "01JH8X3K9Q7B2R5V0N4M6T1YZC";

    #[test]
    fn parts_are_laid_out_as_designed() {
        let id = DecisionId::new(Some("3f9a1c2b7e4d99887766"), true, "8c1e22aa0011", ULID);
        assert_eq!(
            id.as_str(),
            "d_3f9a1c2b7e4d_i_8c1e22aa_01JH8X3K9Q7B2R5V0N4M6T1YZC"
        );
        assert_eq!(id.kinds_digest(), "3f9a1c2b7e4d");
        assert!(id.inference());
        assert_eq!(id.policy_digest(), "8c1e22aa");
        assert_eq!(id.ulid(), ULID);
    }

    #[test]
    fn without_a_kinds_file_the_digest_is_zeros() {
        let id = DecisionId::new(None, false, "8c1e22aa", ULID);
        assert_eq!(
            id.as_str(),
            "d_000000000000_n_8c1e22aa_01JH8X3K9Q7B2R5V0N4M6T1YZC"
        );
        assert!(!id.inference());
    }

    #[test]
    fn parsing_accepts_what_new_makes_and_refuses_the_rest() {
        let id = DecisionId::new(None, true, "deadbeef", ULID);
        assert_eq!(id.as_str().parse::<DecisionId>(), Ok(id.clone()));
        for bad in [
            "",
            "d_",
            "x_000000000000_i_deadbeef_01JH8X3K9Q7B2R5V0N4M6T1YZC",
            "d_000000000000_x_deadbeef_01JH8X3K9Q7B2R5V0N4M6T1YZC",
            "d_00000000000_i_deadbeef_01JH8X3K9Q7B2R5V0N4M6T1YZC",
            "d_000000000000_i_DEADBEEF_01JH8X3K9Q7B2R5V0N4M6T1YZC",
            "d_000000000000_i_deadbeef_01JH8X3K9Q7B2R5V0N4M6T1YZ",
            "d_000000000000_i_deadbeef_01JH8X3K9Q7B2R5V0N4M6T1YZU",
            "d_000000000000_i_deadbeef_01JH8X3K9Q7B2R5V0N4M6T1YZC_x",
        ] {
            assert!(bad.parse::<DecisionId>().is_err(), "{bad} parsed");
        }
    }

    #[test]
    fn serde_refuses_a_malformed_id() {
        assert!(serde_json::from_str::<DecisionId>("\"d_nope\"").is_err());
    }
}
