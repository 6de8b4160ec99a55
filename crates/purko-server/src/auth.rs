//! Bearer tokens and who they speak for.

use axum::http::HeaderMap;
use axum::http::header::AUTHORIZATION;

use crate::error::ApiError;

/// The two tokens the API accepts.
#[derive(Clone)]
pub struct Tokens {
    pub operator: String,
    pub agent: String,
}

impl std::fmt::Debug for Tokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tokens([redacted])")
    }
}

/// Who is calling.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    Operator,
    Agent,
}

impl Tokens {
    /// The caller the request's bearer token speaks for.
    pub fn caller(&self, headers: &HeaderMap) -> Result<Caller, ApiError> {
        let Some(value) = headers.get(AUTHORIZATION) else {
            return Err(ApiError::unauthorized(
                "this endpoint needs a bearer token",
                "send Authorization: Bearer <token>, the operator or agent token printed at first start (also in .purko/operator.token and .purko/agent.token)",
            ));
        };
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim)
            .unwrap_or_default();
        if same(token, &self.operator) {
            Ok(Caller::Operator)
        } else if same(token, &self.agent) {
            Ok(Caller::Agent)
        } else {
            Err(ApiError::unauthorized(
                "the bearer token is not one this server knows",
                "use the token in PURKO_OPERATOR_TOKEN / PURKO_AGENT_TOKEN, or in .purko/operator.token / .purko/agent.token of the server's state folder",
            ))
        }
    }

    /// Only the operator may pass.
    pub fn operator(&self, headers: &HeaderMap) -> Result<(), ApiError> {
        match self.caller(headers)? {
            Caller::Operator => Ok(()),
            Caller::Agent => Err(ApiError::forbidden(
                "this endpoint needs the operator token; an agent token can call tools but can never see or answer approvals",
                "answer approvals as the operator: `purko approvals`, or the API with the operator token",
            )),
        }
    }
}

/// Compares in time independent of where the strings differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}
