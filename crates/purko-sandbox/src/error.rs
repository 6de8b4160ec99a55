//! The crate's errors: [`PlanError`] for a configuration or a machine the sandbox will not run
//! with (pure, found before anything starts), [`Error`] for a run that could not be set up.

use std::path::PathBuf;

use crate::plan::Layer;

pub type Result<T> = std::result::Result<T, Error>;

/// Why no plan could be made. Each message names the setting or the layer, and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error(
        "code execution is off for this agent; set spec.runtime.codeExecution.enabled to true to allow it"
    )]
    Disabled,
    #[error(
        "the agent has not enabled {language}; spec.runtime.codeExecution.languages allows {enabled}"
    )]
    LanguageNotEnabled { language: String, enabled: String },
    #[error(
        "the writable path {} is not absolute and normal; give a full path such as /tmp, without '.' or '..'",
        path.display()
    )]
    RelativePath { path: PathBuf },
    #[error(
        "the writable paths {} and {} overlap; list only one of them",
        first.display(),
        second.display()
    )]
    Overlapping { first: PathBuf, second: PathBuf },
    #[error(
        "the writable path {} would hide or replace {system}, which the sandbox mounts read-only for the interpreter; choose a path outside it, such as /tmp or /work",
        path.display()
    )]
    Shadows { path: PathBuf, system: &'static str },
    #[error("spec.runtime.codeExecution.sandbox.{field} must be more than 0")]
    Zero { field: &'static str },
    #[error(
        "this machine lacks the sandbox's {layer} layer ({reason}); the sandbox refuses to run without it unless the operator accepts the weaker sandbox"
    )]
    MissingLayer { layer: Layer, reason: String },
    #[error(
        "this machine lacks {layer} ({reason}), without which the sandbox cannot build its private file system and process tree; it never runs code unconfined"
    )]
    Required { layer: Layer, reason: String },
}

/// Why a run could not be set up or watched. A contained program that fails is not an error:
/// it is an [`crate::Outcome`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("the sandbox could not be set up: {step} failed ({source})")]
    Setup {
        step: &'static str,
        source: std::io::Error,
    },
    #[error("the sandbox could not start {interpreter}: {source}")]
    Spawn {
        interpreter: &'static str,
        source: std::io::Error,
    },
    #[error(
        "the sandbox allows network access but no egress guard was given; pass the agent's Egress"
    )]
    NoEgress,
    #[error("the seccomp filter could not be built: {0}")]
    Seccomp(String),
    #[error("the sandbox's watcher failed: {0}")]
    Watch(String),
}
