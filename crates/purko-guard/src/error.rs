//! The errors of loading what judgement needs: tools, tool kinds, rules. Judging a call never
//! fails: a refusal is an `Evaluation`, not an error.

use std::path::PathBuf;

/// Where in a file something went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Location {
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A file could not be read at all.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A file could be read but not understood.
    #[error("{}{}: {message}", path.display(), location.as_ref().map(|l| format!(":{l}")).unwrap_or_default())]
    Parse {
        path: PathBuf,
        location: Option<Location>,
        message: String,
        hint: String,
    },

    /// A destination or glob pattern that does not compile.
    #[error("'{pattern}' is not a usable pattern: {why}")]
    Pattern { pattern: String, why: String },
}

impl Error {
    /// What the person can do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::Read { path, .. } => {
                format!("check that {} exists and is readable", path.display())
            }
            Self::Parse { hint, .. } => hint.clone(),
            Self::Pattern { .. } => {
                "write the pattern as *@example.com, https://host.example.com/path/*, *.example.com or a plain glob".into()
            }
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
