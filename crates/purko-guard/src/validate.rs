//! Argument validation against a tool's JSON Schema, with messages a model can act on.
//!
//! The draft is the one the schema declares in `$schema` (draft-07 as the npm reference servers
//! send, 2020-12 when none is declared). Remote `$ref`s are never fetched: the crate is built
//! without its network resolvers, so a tool's schema cannot make Purko call out.

use jsonschema::error::{TypeKind, ValidationErrorKind};
use jsonschema::{ValidationError, Validator};
use purko_protocol::ArgumentError;
use serde_json::Value;

/// The most errors reported for one call; the first few are what a model can fix at once.
const MAX_ERRORS: usize = 8;
/// Longest message; values in messages are cut to keep a 10 MB argument out of the answer.
const MAX_MESSAGE: usize = 300;

/// A tool's compiled schema.
#[derive(Debug)]
pub enum Schema {
    Compiled(Box<Validator>),
    /// The tool declares no `inputSchema`: arguments are not checked.
    Missing,
    /// The tool's `inputSchema` is not a JSON Schema; calls cannot be checked and are refused.
    Invalid(String),
}

impl Schema {
    pub fn compile(schema: Option<&Value>) -> Self {
        let Some(schema) = schema else {
            return Self::Missing;
        };
        if !matches!(schema, Value::Object(_) | Value::Bool(_)) {
            return Self::Invalid(format!(
                "an inputSchema must be an object, not {}",
                type_name(schema)
            ));
        }
        match jsonschema::options()
            .should_validate_formats(true)
            .build(schema)
        {
            Ok(validator) => Self::Compiled(Box::new(validator)),
            Err(error) => Self::Invalid(cut(&error.to_string())),
        }
    }

    /// The errors of `arguments`; empty when they fit.
    pub fn check(&self, arguments: &Value) -> Vec<ArgumentError> {
        let Self::Compiled(validator) = self else {
            return Vec::new();
        };
        if validator.is_valid(arguments) {
            return Vec::new();
        }
        validator
            .iter_errors(arguments)
            .take(MAX_ERRORS)
            .map(|e| explain(&e))
            .collect()
    }
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "an integer",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// `/items/0/name` → `items[0].name`.
pub fn argument_path(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').skip(1) {
        let part = part.replace("~1", "/").replace("~0", "~");
        if part.parse::<usize>().is_ok() && !out.is_empty() {
            out.push('[');
            out.push_str(&part);
            out.push(']');
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part);
        }
    }
    out
}

fn cut(text: &str) -> String {
    if text.len() <= MAX_MESSAGE {
        return text.to_owned();
    }
    let mut end = MAX_MESSAGE;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn list(value: &Value) -> String {
    match value {
        Value::Array(items) => items
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
            .collect::<Vec<_>>()
            .join(", "),
        other => other.to_string(),
    }
}

fn explain(error: &ValidationError<'_>) -> ArgumentError {
    let pointer = error.instance_path().as_str().to_owned();
    let path = argument_path(&pointer);
    let subject = if path.is_empty() {
        "the arguments".to_owned()
    } else {
        format!("argument '{path}'")
    };
    let message = match error.kind() {
        ValidationErrorKind::Required { property } => {
            let name = property
                .as_str()
                .map_or_else(|| property.to_string(), str::to_owned);
            let full = if path.is_empty() {
                name
            } else {
                format!("{path}.{name}")
            };
            format!("argument '{full}' is required")
        }
        ValidationErrorKind::Type { kind } => {
            let wanted = match kind {
                TypeKind::Single(t) => t.to_string(),
                TypeKind::Multiple(ts) => ts
                    .iter()
                    .map(|t| t.to_string())
                    .collect::<Vec<_>>()
                    .join(" or "),
            };
            format!(
                "{subject} must be of type {wanted}, not {}",
                type_name(error.instance())
            )
        }
        ValidationErrorKind::Enum { options } => {
            format!("{subject} must be one of {}", list(options))
        }
        ValidationErrorKind::Constant { expected_value } => {
            format!("{subject} must be {expected_value}")
        }
        ValidationErrorKind::AdditionalProperties { unexpected } => {
            let names = unexpected.join("', '");
            if path.is_empty() {
                format!("argument '{names}' is not accepted by this tool")
            } else {
                format!("'{names}' is not accepted inside {subject}")
            }
        }
        ValidationErrorKind::Format { format } => format!("{subject} must be a valid {format}"),
        _ => format!("{subject}: {}", error.masked()),
    };
    ArgumentError {
        path: pointer,
        message: cut(&message),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn messages(schema: &Value, arguments: &Value) -> Vec<String> {
        Schema::compile(Some(schema))
            .check(arguments)
            .into_iter()
            .map(|e| e.message)
            .collect()
    }

    #[test]
    fn messages_name_the_argument_and_the_fix() {
        let schema = json!({
            "type": "object",
            "properties": {
                "units": {"enum": ["metric", "imperial"]},
                "count": {"type": "integer"},
                "to": {"type": "string", "format": "email"},
                "items": {"type": "array", "items": {"type": "object", "required": ["name"]}}
            },
            "required": ["units"],
            "additionalProperties": false
        });
        assert_eq!(
            messages(&schema, &json!({})),
            vec!["argument 'units' is required"]
        );
        let mut got = messages(
            &schema,
            &json!({"units": "kelvin", "count": "3", "to": "nobody", "items": [{}], "extra": 1}),
        );
        got.sort();
        assert_eq!(
            got,
            vec![
                "argument 'count' must be of type integer, not a string",
                "argument 'extra' is not accepted by this tool",
                "argument 'items[0].name' is required",
                "argument 'to' must be a valid email",
                "argument 'units' must be one of metric, imperial",
            ]
        );
    }

    #[test]
    fn the_declared_draft_is_used() {
        // Tuple `items` is draft-07; 2020-12 spells it prefixItems.
        let draft7 = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array", "items": [{"type": "string"}], "additionalItems": false
        });
        assert_eq!(messages(&draft7, &json!(["a"])), Vec::<String>::new());
        assert_eq!(messages(&draft7, &json!(["a", "b"])).len(), 1);
    }

    #[test]
    fn broken_and_missing_schemas_are_told_apart() {
        assert!(matches!(Schema::compile(None), Schema::Missing));
        assert!(matches!(
            Schema::compile(Some(&json!("object"))),
            Schema::Invalid(_)
        ));
        assert!(matches!(
            Schema::compile(Some(&json!({"type": "objekt"}))),
            Schema::Invalid(_)
        ));
        assert!(matches!(
            Schema::compile(Some(&json!({"$ref": "https://example.com/s.json"}))),
            Schema::Invalid(_)
        ));
    }
}
