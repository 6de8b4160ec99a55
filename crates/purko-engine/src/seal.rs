//! Tokens Purko hands to a client and must know again when they come back, such as the
//! `requestState` of an approval put to the person on protocol 2026-07-28: an HMAC-SHA256 tag
//! under a key derived from the store's secret, so every process sharing the store knows a
//! token any of them made, and a client cannot make one.

use hmac::Mac;

use crate::once::{hex, mac};

/// What the sealing key is derived from. It holds no field separator, so no idempotency key's
/// input is ever this text: the derived key is never handed out.
const PURPOSE: &str = "purko: the key of sealed tokens";

/// Seals and checks tokens. See the module's comment.
pub(crate) struct Sealer {
    key: [u8; 32],
}

impl Sealer {
    pub fn new(secret: &[u8; 32]) -> Self {
        Self {
            key: mac(secret, &[PURPOSE]).finalize().into_bytes().into(),
        }
    }

    /// The tag of `fields`, in hex.
    pub fn seal(&self, fields: &[&str]) -> String {
        hex(&mac(&self.key, fields).finalize().into_bytes())
    }

    /// Whether `tag` is the tag of `fields`, compared in constant time.
    pub fn opens(&self, fields: &[&str], tag: &str) -> bool {
        let Some(bytes) = unhex(tag) else {
            return false;
        };
        mac(&self.key, fields).verify_slice(&bytes).is_ok()
    }
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer")
    }
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) || !text.is_ascii() {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&text[i..i + 2], 16).ok())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seal_opens_only_for_its_own_fields_and_secret() {
        let sealer = Sealer::new(&[7u8; 32]);
        let tag = sealer.seal(&["a_1", "test/shop"]);
        assert!(sealer.opens(&["a_1", "test/shop"], &tag));
        assert!(!sealer.opens(&["a_2", "test/shop"], &tag));
        assert!(!sealer.opens(&["a_1", "test/open"], &tag));
        assert!(!sealer.opens(&["a_1test/", "shop"], &tag));
        assert!(!Sealer::new(&[8u8; 32]).opens(&["a_1", "test/shop"], &tag));
        for forged in ["", "zz", &tag[..62], "é", &"0".repeat(64)] {
            assert!(!sealer.opens(&["a_1", "test/shop"], forged), "{forged}");
        }
    }
}
