//! Planning: a pure transform from an agent's `spec.runtime.codeExecution` and the host's
//! features to what one run will be. Nothing here touches the machine, so every refusal (a
//! language not enabled, a bad writable path, a missing layer) is found before a process starts.
//!
//! Invariant: a [`Plan`] exists only if every layer it lacks was accepted by the operator, and
//! its writable paths are absolute, normal, disjoint, and outside what the interpreter needs.

use std::fmt;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use purko_config::{CodeExecution, Language};
use serde::Serialize;

use crate::error::PlanError;
use crate::host::{Host, Probe};

/// What to do when the kernel lacks an optional layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Weaker {
    /// Refuse to plan (the default).
    Refuse,
    /// The operator accepted running without the missing layers; the plan lists them.
    Accept,
}

impl Weaker {
    /// `Accept` when the operator said so (`acceptWeaker`, `--accept-weaker-sandbox`).
    pub fn accepted(accept: bool) -> Weaker {
        if accept {
            Weaker::Accept
        } else {
            Weaker::Refuse
        }
    }
}

/// One wall of the sandbox.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Layer {
    UserNamespaces,
    Landlock,
    Seccomp,
    Cgroup,
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Layer::UserNamespaces => "user namespaces",
            Layer::Landlock => "Landlock",
            Layer::Seccomp => "seccomp",
            Layer::Cgroup => "cgroup v2",
        })
    }
}

/// Whether the code may reach the network, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Network {
    /// A network namespace with nothing in it.
    Denied,
    /// Loopback only, with Purko's egress proxy listening on it; HTTP and HTTPS go through the
    /// egress guard, nothing else leaves.
    Proxied,
}

/// The limits of one run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Limits {
    /// The whole sandbox is killed at this deadline.
    pub wall_clock: Duration,
    /// `RLIMIT_CPU`, seconds.
    pub cpu_seconds: u64,
    /// `RLIMIT_AS`, bytes of address space per process.
    pub memory_bytes: u64,
    /// `RLIMIT_NPROC`: processes (and threads) of the sandbox's user, the interpreter included.
    pub processes: u64,
    /// `RLIMIT_NOFILE`.
    pub open_files: u64,
    /// `RLIMIT_FSIZE`, bytes.
    pub file_size_bytes: u64,
    /// The size of each writable tmpfs, bytes.
    pub tmpfs_bytes: u64,
    /// Captured bytes per stream (stdout, stderr); past it the output is cut with a marker.
    pub output_bytes: usize,
}

impl Limits {
    /// The limits for `maxExecutionSeconds` and `maxOutputBytes`; the rest are fixed defaults
    /// sized for scripts (512 MiB, 64 processes, 256 files, 64 MiB files and tmpfs).
    pub fn for_config(max_execution_seconds: u64, max_output_bytes: u64) -> Limits {
        Limits {
            wall_clock: Duration::from_secs(max_execution_seconds),
            cpu_seconds: max_execution_seconds,
            memory_bytes: 512 << 20,
            processes: 64,
            open_files: 256,
            file_size_bytes: 64 << 20,
            tmpfs_bytes: 64 << 20,
            output_bytes: usize::try_from(max_output_bytes).unwrap_or(usize::MAX),
        }
    }
}

/// Where the interpreter lives, read-only inside the sandbox. A writable path may not be any
/// of these, lie inside one, or contain one.
pub(crate) const SYSTEM_PATHS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/proc", "/dev",
    CODE_DIR,
];

/// Where the program text is placed, read-only.
pub(crate) const CODE_DIR: &str = "/.purko";

/// One run, decided.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Plan {
    pub language: Language,
    pub limits: Limits,
    pub network: Network,
    /// Each gets its own empty tmpfs; nothing else is writable.
    pub writable_paths: Vec<PathBuf>,
    /// The Landlock ABI to use, or `None` when the operator accepted running without it.
    pub landlock_abi: Option<u32>,
    /// Whether the seccomp filter is installed (false only when accepted as missing).
    pub seccomp: bool,
    /// The layers this plan runs without, each accepted by the operator or optional (cgroup).
    pub missing: Vec<Layer>,
}

impl Plan {
    pub fn new(
        config: &CodeExecution,
        language: Language,
        host: &Host,
        weaker: Weaker,
    ) -> Result<Plan, PlanError> {
        if !config.enabled {
            return Err(PlanError::Disabled);
        }
        if !config.languages.contains(&language) {
            let enabled: Vec<&str> = config.languages.iter().map(|l| l.as_str()).collect();
            return Err(PlanError::LanguageNotEnabled {
                language: language.as_str().to_owned(),
                enabled: if enabled.is_empty() {
                    "none".to_owned()
                } else {
                    enabled.join(", ")
                },
            });
        }
        let sandbox = &config.sandbox;
        if sandbox.max_execution_seconds == 0 {
            return Err(PlanError::Zero {
                field: "maxExecutionSeconds",
            });
        }
        if sandbox.max_output_bytes == 0 {
            return Err(PlanError::Zero {
                field: "maxOutputBytes",
            });
        }
        let writable_paths = check_writable(&sandbox.writable_paths)?;

        if let Probe::Missing(reason) = &host.user_namespaces {
            return Err(PlanError::Required {
                layer: Layer::UserNamespaces,
                reason: reason.clone(),
            });
        }
        let mut missing = Vec::new();
        let mut lacks = |layer: Layer, reason: String| match weaker {
            Weaker::Refuse => Err(PlanError::MissingLayer { layer, reason }),
            Weaker::Accept => {
                missing.push(layer);
                Ok(())
            }
        };
        if host.landlock_abi.is_none() {
            lacks(
                Layer::Landlock,
                "Landlock is not enabled in this kernel (lsm= boot parameter)".into(),
            )?;
        }
        if let Probe::Missing(reason) = &host.seccomp {
            lacks(Layer::Seccomp, reason.clone())?;
        }
        // cgroup limits are optional: the rlimits stand in for them (see the README).
        missing.push(Layer::Cgroup);

        Ok(Plan {
            language,
            limits: Limits::for_config(sandbox.max_execution_seconds, sandbox.max_output_bytes),
            network: if sandbox.network_access {
                Network::Proxied
            } else {
                Network::Denied
            },
            writable_paths,
            landlock_abi: host.landlock_abi,
            seccomp: host.seccomp.is_present(),
            missing,
        })
    }

    /// The walls this plan runs without that the operator had to accept (cgroup limits are
    /// optional and not among them), for a warning at each run.
    pub fn weakened(&self) -> Option<String> {
        let layers: Vec<String> = self
            .missing
            .iter()
            .filter(|l| **l != Layer::Cgroup)
            .map(ToString::to_string)
            .collect();
        (!layers.is_empty()).then(|| layers.join(", "))
    }

    /// The interpreter's path inside (and outside) the sandbox.
    pub fn interpreter(&self) -> &'static str {
        match self.language {
            Language::Python => "/usr/bin/python3",
            Language::Bash => "/usr/bin/bash",
        }
    }
}

fn check_writable(paths: &[PathBuf]) -> Result<Vec<PathBuf>, PlanError> {
    let mut checked: Vec<PathBuf> = Vec::new();
    for path in paths {
        if !is_normal_absolute(path) {
            return Err(PlanError::RelativePath { path: path.clone() });
        }
        let path: &Path = &path.components().collect::<PathBuf>();
        for system in SYSTEM_PATHS {
            if path.starts_with(system) || Path::new(system).starts_with(path) {
                return Err(PlanError::Shadows {
                    path: path.to_owned(),
                    system,
                });
            }
        }
        if let Some(other) = checked
            .iter()
            .find(|o| o.starts_with(path) || path.starts_with(o))
        {
            return Err(PlanError::Overlapping {
                first: other.clone(),
                second: path.to_owned(),
            });
        }
        checked.push(path.to_owned());
    }
    Ok(checked)
}

/// Absolute and without `.` or `..` (so `starts_with` compares what the kernel
/// would mount).
fn is_normal_absolute(path: &Path) -> bool {
    let text = path.as_os_str().as_encoded_bytes();
    let mut components = path.components();
    components.next() == Some(Component::RootDir)
        && components.all(|c| matches!(c, Component::Normal(_)))
        && !text.ends_with(b"/.")
        && !text.windows(3).any(|w| w == b"/./")
}
