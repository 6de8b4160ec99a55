//! Reading the secrets that endpoints point to. A secret's value is returned to the caller and
//! never put into an error, a `Debug` output or a log line.

use std::path::Path;

use crate::agent::SecretRef;
use crate::error::{Error, Result};

impl SecretRef {
    /// Reads the secret: the variable's value, or the file's content (`base` is the manifest's
    /// folder), without a trailing newline. An unset, empty or unreadable secret is an error that
    /// names the variable or file.
    pub fn resolve(&self, base: &Path) -> Result<String> {
        match self {
            Self::Env(name) => {
                let value = crate::env::secret_var(name).map_err(|problem| Error::SecretEnv {
                    name: name.clone(),
                    problem,
                })?;
                let value = without_newline(value);
                if value.is_empty() {
                    return Err(Error::SecretEnv {
                        name: name.clone(),
                        problem: "empty",
                    });
                }
                Ok(value)
            }
            Self::File(file) => {
                let path = base.join(file);
                let problem = |problem: String| Error::SecretFile {
                    path: path.clone(),
                    problem,
                };
                let value = std::fs::read_to_string(&path).map_err(|e| {
                    problem(match e.kind() {
                        std::io::ErrorKind::NotFound => "it does not exist".into(),
                        std::io::ErrorKind::PermissionDenied => "permission denied".into(),
                        std::io::ErrorKind::InvalidData => "it is not UTF-8 text".into(),
                        _ => e.to_string(),
                    })
                })?;
                let value = without_newline(value);
                if value.is_empty() {
                    return Err(problem("it is empty".into()));
                }
                Ok(value)
            }
        }
    }

    /// The variable or file, for messages.
    pub fn describe(&self) -> String {
        match self {
            Self::Env(name) => format!("environment variable {name}"),
            Self::File(path) => format!("file {}", path.display()),
        }
    }
}

fn without_newline(mut value: String) -> String {
    let kept = value.trim_end_matches(['\n', '\r']).len();
    value.truncate(kept);
    value
}
