//! What can make the engine itself fail. A refused, rejected or failed tool call is not here:
//! it is an `Observation`. These are the failures of Purko: a bad manifest, an unknown agent, a
//! store that cannot be read or written.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No agent has that `namespace/name`.
    #[error("no agent named '{agent}'; known agents: {known}")]
    UnknownAgent { agent: String, known: String },

    /// No approval has that id.
    #[error("no approval with id '{0}'")]
    UnknownApproval(String),

    /// An agent could not be built from its manifest.
    #[error("{}: agent '{agent}': {message}", source_file.display())]
    Agent {
        source_file: PathBuf,
        agent: String,
        message: String,
        hint: String,
    },

    #[error(transparent)]
    Config(#[from] purko_config::Error),

    #[error(transparent)]
    Guard(#[from] purko_guard::Error),

    #[error(transparent)]
    Store(#[from] purko_store::Error),

    #[error("cannot start the HTTP client: {0}")]
    Http(#[from] purko_http::Error),

    #[error("cannot start the webhook client: {0}")]
    Webhook(String),

    /// The task running a call ended without an answer (a panic, or shutdown).
    #[error("the call was interrupted: {0}")]
    Interrupted(String),
}

impl Error {
    /// What the person can do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::UnknownAgent { .. } => {
                "pass the agent as namespace/name, as its manifest's metadata says".into()
            }
            Self::UnknownApproval(_) => {
                "list the approvals with `purko approvals list` and use one of their ids".into()
            }
            Self::Agent { hint, .. } => hint.clone(),
            Self::Config(e) => e.hint(),
            Self::Guard(e) => e.hint(),
            Self::Store(e) => e.hint(),
            Self::Interrupted(_) => {
                "see the server's log; the call's decision id tells what happened before".into()
            }
            Self::Http(_) | Self::Webhook(_) => {
                "this is a bug in Purko's HTTP set-up; please report it".into()
            }
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
