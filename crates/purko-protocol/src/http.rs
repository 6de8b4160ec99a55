//! The words of an HTTP endpoint that manifests and the API backend share: its method and how
//! its credential is presented (seed 000's `EndpointSpec`).

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// An HTTP method an API tool may use. Written in any case, kept upper-case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HttpMethod {
    Get,
    Post,
    Put,
    Patch,
    Delete,
}

impl HttpMethod {
    pub const ALL: &'static [HttpMethod] = &[
        HttpMethod::Get,
        HttpMethod::Post,
        HttpMethod::Put,
        HttpMethod::Patch,
        HttpMethod::Delete,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
            Self::Put => "PUT",
            Self::Patch => "PATCH",
            Self::Delete => "DELETE",
        }
    }

    /// Whether the arguments travel as a JSON body (else as query parameters).
    pub fn has_body(self) -> bool {
        matches!(self, Self::Post | Self::Put | Self::Patch)
    }
}

impl fmt::Display for HttpMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for HttpMethod {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let upper = text.to_ascii_uppercase();
        Self::ALL
            .iter()
            .copied()
            .find(|m| m.as_str() == upper)
            .ok_or_else(|| {
                format!("unknown method '{text}', expected one of GET, POST, PUT, PATCH, DELETE")
            })
    }
}

impl Serialize for HttpMethod {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for HttpMethod {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        String::deserialize(deserializer)?
            .parse()
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(feature = "schema")]
impl schemars::JsonSchema for HttpMethod {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Method".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        // Any case is accepted, so an enum of the upper-case words would be too strict.
        let pattern = Self::ALL
            .iter()
            .map(|m| {
                m.as_str().chars().fold(String::new(), |mut class, c| {
                    class.extend(['[', c, c.to_ascii_lowercase(), ']']);
                    class
                })
            })
            .collect::<Vec<_>>()
            .join("|");
        schemars::json_schema!({
            "description": "An HTTP method, in any case: GET, POST, PUT, PATCH or DELETE.",
            "type": "string",
            "pattern": format!("^({pattern})$"),
            "examples": ["GET", "POST"],
        })
    }
}

/// How an endpoint's credential is presented.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "schema", derive(schemars::JsonSchema))]
pub enum AuthScheme {
    /// `Authorization: Bearer <secret>`.
    Bearer,
    /// `Authorization: Token <secret>`.
    Token,
    /// `Authorization: Basic <secret>`, the secret being `user:password` in base64.
    Basic,
    /// `Authorization: ApiKey <secret>`, or the secret alone in a custom `authHeader`.
    ApiKey,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn methods_parse_in_any_case_and_print_upper_case() {
        assert_eq!("pAtCh".parse::<HttpMethod>(), Ok(HttpMethod::Patch));
        assert_eq!(
            serde_json::to_value(HttpMethod::Delete).expect("serializes"),
            "DELETE"
        );
        assert!("fetch".parse::<HttpMethod>().is_err());
        assert!(HttpMethod::Put.has_body() && !HttpMethod::Get.has_body());
    }
}
