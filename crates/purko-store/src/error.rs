//! The errors of keeping Purko's state. Every message names the file it is about, and `hint()`
//! says what a person can do; no variant ever deletes or overwrites a file on its way out.

use std::path::PathBuf;
use std::sync::Arc;

/// Why the store could not do what was asked.
///
/// Errors are `Clone` (their sources are shared) because one failed group commit answers every
/// waiter of the batch with the same error.
#[derive(Clone, Debug, thiserror::Error)]
pub enum Error {
    /// The folder or the file could not be created or read.
    #[error("cannot use {}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: Arc<std::io::Error>,
    },

    /// Another process held the write lock for longer than the busy timeout.
    #[error(
        "{} is locked by another process (waited {waited_ms} ms for it)",
        path.display()
    )]
    Locked { path: PathBuf, waited_ms: u64 },

    /// The file exists but is not an `SQLite` database, or is another program's database.
    #[error(
        "{} is not a Purko store ({why}); move it aside and purko will create a new one",
        path.display()
    )]
    NotAStore { path: PathBuf, why: String },

    /// The file was written by a newer purko, whose schema this one does not know.
    #[error(
        "{} has schema version {found}, newer than the version {supported} this purko knows",
        path.display()
    )]
    NewerSchema {
        path: PathBuf,
        found: i64,
        supported: i64,
    },

    /// A stored value could not be read back (a JSON column that does not parse, an id that is
    /// not an id).
    #[error("{} holds a {what} that cannot be read: {message}", path.display())]
    Corrupt {
        path: PathBuf,
        what: &'static str,
        message: String,
    },

    /// Something the call refers to is not in the store.
    #[error("{what} is not in the store {}", path.display())]
    NotFound { path: PathBuf, what: String },

    /// `complete` was called for a key this run does not hold (released, cleared, or
    /// re-claimed after its TTL).
    #[error("idempotency key {key} is no longer held by run {run} in {}", path.display())]
    ClaimLost {
        path: PathBuf,
        key: String,
        run: String,
    },

    /// Any other `SQLite` failure.
    #[error("the store {} failed: {source}", path.display())]
    Sqlite {
        path: PathBuf,
        #[source]
        source: Arc<rusqlite::Error>,
    },

    /// A value could not be turned into JSON to be stored.
    #[error("cannot encode a {what} for {}: {message}", path.display())]
    Encode {
        path: PathBuf,
        what: &'static str,
        message: String,
    },

    /// The operating system gave no random bytes for the idempotency secret.
    #[error("cannot generate the idempotency secret for {}: {message}", path.display())]
    Random { path: PathBuf, message: String },

    /// The thread that writes to the store has stopped (it panicked, or the store is closing).
    #[error("the writer of {} has stopped", path.display())]
    WriterStopped { path: PathBuf },
}

impl Error {
    /// What the person can do about it.
    /// Whether another process holds the file: worth a retry, not a bug.
    pub fn is_busy(&self) -> bool {
        matches!(self, Self::Locked { .. })
    }

    pub fn hint(&self) -> String {
        match self {
            Self::Io { path, .. } => format!(
                "check that {} exists or can be created, and that purko may write there",
                path.display()
            ),
            Self::Locked { path, .. } => format!(
                "another purko is probably using {}: stop it, or give this one its own folder with PURKO_HOME",
                parent(path)
            ),
            Self::NotAStore { path, .. } => format!(
                "move {} aside (for example to purko.db.broken) and start purko again; nothing was changed in it",
                path.display()
            ),
            Self::NewerSchema { path, .. } => format!(
                "upgrade purko to the version that wrote {}, or give this one its own folder with PURKO_HOME",
                path.display()
            ),
            Self::Corrupt { path, .. } => format!(
                "the store {} was changed outside purko; restore it from a backup or move it aside",
                path.display()
            ),
            Self::NotFound { .. } => {
                "check the id; list what the store holds with `purko decisions` or `purko approvals`".into()
            }
            Self::ClaimLost { .. } => {
                "the call ran but its outcome was not kept for replay; check the decision log for its result".into()
            }
            Self::Sqlite { path, .. } | Self::WriterStopped { path } => format!(
                "check the disk space and permissions of {}, then restart purko",
                parent(path)
            ),
            Self::Encode { .. } => "this is a bug in purko; please report it".into(),
            Self::Random { .. } => {
                "set an idempotency secret in the configuration, or check the system's random source".into()
            }
        }
    }
}

fn parent(path: &std::path::Path) -> String {
    path.parent().unwrap_or(path).display().to_string()
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
