//! Errors of the API as JSON with the fitting HTTP status. A refused tool call is not one of
//! these: it is an observation.

use axum::Json;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

#[derive(Debug)]
pub struct ApiError {
    status: StatusCode,
    message: String,
    hint: String,
}

impl ApiError {
    pub fn new(status: StatusCode, message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self {
            status,
            message: message.into(),
            hint: hint.into(),
        }
    }

    pub fn unauthorized(message: &str, hint: &str) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, message, hint)
    }

    pub fn forbidden(message: &str, hint: &str) -> Self {
        Self::new(StatusCode::FORBIDDEN, message, hint)
    }

    pub fn bad_request(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, message, hint)
    }

    pub fn not_found(message: impl Into<String>, hint: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, message, hint)
    }
}

impl From<purko_engine::Error> for ApiError {
    fn from(e: purko_engine::Error) -> Self {
        let status = match &e {
            purko_engine::Error::UnknownAgent { .. } | purko_engine::Error::UnknownApproval(_) => {
                StatusCode::NOT_FOUND
            }
            purko_engine::Error::Store(s) if s.is_busy() => StatusCode::SERVICE_UNAVAILABLE,
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        if status.is_server_error() {
            tracing::error!("{e}");
        }
        Self::new(status, e.to_string(), e.hint())
    }
}

impl From<purko_store::Error> for ApiError {
    fn from(e: purko_store::Error) -> Self {
        purko_engine::Error::from(e).into()
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (
            self.status,
            Json(json!({"error": self.message, "hint": self.hint})),
        )
            .into_response();
        if self.status == StatusCode::UNAUTHORIZED {
            response.headers_mut().insert(
                axum::http::header::WWW_AUTHENTICATE,
                axum::http::HeaderValue::from_static("Bearer"),
            );
        }
        response
    }
}
