//! What can stop the gateway from serving. A refused or failed tool call is not here: it is a
//! `CallToolResult` with `isError: true`.

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The engine refused to set the gateway up (an unknown agent, mostly).
    #[error(transparent)]
    Engine(#[from] purko_engine::Error),

    /// The client never completed the MCP handshake, or the transport broke.
    #[error("the MCP connection failed: {0}")]
    Transport(String),
}

impl Error {
    /// What the person can do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::Engine(e) => e.hint(),
            Self::Transport(_) => {
                "check that the client speaks MCP on this process's standard input and output"
                    .into()
            }
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
