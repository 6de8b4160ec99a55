//! The crate's one error type: what an operator's check list can get wrong.

/// An invalid check list, named by list and entry.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A list entry that can never match anything.
    #[error("the {list} check list has an empty entry: give each entry an api name")]
    EmptyEntry { list: &'static str },
    /// A bash entry that names no known command or rule.
    #[error("the {list} check list entry `{entry}` {reason}")]
    InvalidEntry {
        list: &'static str,
        entry: String,
        reason: &'static str,
    },
}

pub type Result<T> = std::result::Result<T, Error>;
