//! The errors of reading manifests and the secrets they point to. Every error about a manifest
//! names the file, and the line, column and document where it can.

use std::path::PathBuf;

pub use purko_guard::Location;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A path that was asked for is not there.
    #[error("{}: no such file or folder", path.display())]
    Missing { path: PathBuf },

    /// A file or folder could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },

    /// A folder with no `*.yaml` or `*.yml` file in it, at any depth.
    #[error("{}: the folder holds no manifests (no *.yaml or *.yml file)", path.display())]
    NoManifests { path: PathBuf },

    /// A manifest file that could be read but not understood, or that says something invalid.
    #[error("{}: {message}", place(path, location.as_ref(), *document))]
    Manifest {
        path: PathBuf,
        location: Option<Location>,
        /// The document's number (from 1) when the file holds several.
        document: Option<usize>,
        message: String,
        hint: String,
    },

    /// A secret named by an environment variable that cannot be used. The value is never shown.
    #[error("the secret environment variable {name} is {problem}")]
    SecretEnv { name: String, problem: &'static str },

    /// A secret file that cannot be used. Its content is never shown.
    #[error("cannot use the secret file {}: {problem}", path.display())]
    SecretFile { path: PathBuf, problem: String },
}

fn place(path: &std::path::Path, location: Option<&Location>, document: Option<usize>) -> String {
    let location = location.map(|l| format!(":{l}")).unwrap_or_default();
    let document = document
        .map(|d| format!(": document {d}"))
        .unwrap_or_default();
    format!("{}{location}{document}", path.display())
}

impl Error {
    /// What the person can do about it.
    pub fn hint(&self) -> String {
        match self {
            Self::Missing { path } => format!(
                "check the path {}: name manifest files or folders that exist",
                path.display()
            ),
            Self::Read { path, .. } => {
                format!("check that {} is readable", path.display())
            }
            Self::NoManifests { .. } => "put Purko manifests (apiVersion: purko.io/v1alpha1) in *.yaml or *.yml files there, or name the files to load".into(),
            Self::Manifest { hint, .. } => hint.clone(),
            Self::SecretEnv { name, .. } => format!(
                "set {name} in the environment Purko runs in, or point secretRef at a file with secretRef: {{file: <path>}}"
            ),
            Self::SecretFile { path, .. } => format!(
                "write the secret to {} (one line), or point secretRef at an environment variable with secretRef: {{env: <NAME>}}",
                path.display()
            ),
        }
    }

    /// The location of a manifest error, when known.
    pub fn location(&self) -> Option<&Location> {
        match self {
            Self::Manifest { location, .. } => location.as_ref(),
            _ => None,
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
