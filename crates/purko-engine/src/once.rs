//! "Never runs a mutation twice" (DESIGN.md section 6): the idempotency key of a call and the
//! digest that says two calls carry the same arguments.

use hmac::{Hmac, KeyInit, Mac};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// Separates the fields of the key's input, so `("a", "bc")` and `("ab", "c")` differ.
const SEPARATOR: u8 = 0x1f;

/// `hex(HMAC-SHA256(secret, session ‖ step ‖ tool))`.
pub fn idempotency_key(secret: &[u8; 32], session: &str, step: &str, tool: &str) -> String {
    hex(&mac(secret, &[session, step, tool]).finalize().into_bytes())
}

/// HMAC-SHA256 under `key` of the fields, kept apart by [`SEPARATOR`], ready to finish or
/// verify.
pub(crate) fn mac(key: &[u8], fields: &[&str]) -> Hmac<Sha256> {
    let mut mac =
        <Hmac<Sha256> as KeyInit>::new_from_slice(key).expect("HMAC takes a key of any length");
    for (i, field) in fields.iter().enumerate() {
        if i > 0 {
            mac.update(&[SEPARATOR]);
        }
        mac.update(field.as_bytes());
    }
    mac
}

/// Hex SHA-256 of the arguments' canonical JSON (keys sorted, no spaces), so the same
/// arguments written in another key order have the same digest.
pub fn arguments_digest(arguments: &Value) -> String {
    // serde_json keeps object keys sorted (no `preserve_order`), so this is canonical.
    let text = serde_json::to_string(arguments).unwrap_or_default();
    hex(&Sha256::digest(text.as_bytes()))
}

pub(crate) fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes
        .iter()
        .fold(String::with_capacity(bytes.len() * 2), |mut s, b| {
            let _ = write!(s, "{b:02x}");
            s
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_key_depends_on_every_field_and_their_boundaries() {
        let secret = [7u8; 32];
        let k = idempotency_key(&secret, "s1", "3", "create_issue");
        assert_eq!(k.len(), 64);
        assert_eq!(k, idempotency_key(&secret, "s1", "3", "create_issue"));
        assert_ne!(k, idempotency_key(&secret, "s1", "4", "create_issue"));
        assert_ne!(k, idempotency_key(&secret, "s13", "", "create_issue"));
        assert_ne!(k, idempotency_key(&[8u8; 32], "s1", "3", "create_issue"));
    }

    #[test]
    fn the_digest_ignores_key_order() {
        let a: Value = serde_json::from_str(r#"{"b":1,"a":{"y":2,"x":3}}"#).unwrap();
        assert_eq!(
            arguments_digest(&a),
            arguments_digest(&json!({"a":{"x":3,"y":2},"b":1}))
        );
        assert_ne!(
            arguments_digest(&a),
            arguments_digest(&json!({"a":{"x":3,"y":2},"b":2}))
        );
    }
}
