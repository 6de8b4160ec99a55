//! What this kernel offers the sandbox, probed once per process. The plan is made from these
//! facts, so a test can hand [`crate::Plan::new`] any machine it likes.

use std::fs;
use std::path::Path;

use serde::Serialize;

/// Whether a layer is there, and if not, why not (in words an operator can act on).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state", content = "reason")]
pub enum Probe {
    Present,
    Missing(String),
}

impl Probe {
    pub fn is_present(&self) -> bool {
        matches!(self, Probe::Present)
    }
}

/// The kernel's sandboxing features.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Host {
    /// Unprivileged user namespaces (with PID, mount, network, IPC and UTS namespaces).
    pub user_namespaces: Probe,
    /// The Landlock ABI version, when Landlock is enabled.
    pub landlock_abi: Option<u32>,
    /// seccomp filters.
    pub seccomp: Probe,
    /// A delegated cgroup v2 subtree with the memory and pids controllers.
    pub cgroup_v2: Probe,
}

impl Host {
    /// Reads the sysctls that gate user namespaces (including the `AppArmor` restriction of Ubuntu),
    /// asks the kernel for the Landlock ABI and the seccomp mode, looks for cgroup v2, and finally
    /// creates the namespaces once in a throwaway child, since only trying tells for sure.
    pub fn probe() -> Host {
        Host {
            user_namespaces: probe_user_namespaces(),
            landlock_abi: crate::landlock::abi(),
            seccomp: if crate::sys::seccomp_available() {
                Probe::Present
            } else {
                Probe::Missing("the kernel was built without seccomp filters".into())
            },
            cgroup_v2: probe_cgroup_v2(),
        }
    }

    /// A machine with every layer, for planning without probing.
    pub fn complete() -> Host {
        Host {
            user_namespaces: Probe::Present,
            landlock_abi: Some(7),
            seccomp: Probe::Present,
            cgroup_v2: Probe::Present,
        }
    }
}

fn sysctl(path: &str) -> Option<String> {
    fs::read_to_string(path).ok().map(|s| s.trim().to_owned())
}

fn probe_user_namespaces() -> Probe {
    if sysctl("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Probe::Missing("user.max_user_namespaces is 0".into());
    }
    if sysctl("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Probe::Missing(
            "kernel.unprivileged_userns_clone is 0; set it to 1 to allow the sandbox".into(),
        );
    }
    if sysctl("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return Probe::Missing(
            "AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns is 1); give the purko binary an \
             AppArmor profile with the userns permission, or set the sysctl to 0"
                .into(),
        );
    }
    match crate::sys::try_namespaces() {
        Ok(()) => Probe::Present,
        Err(e) => Probe::Missing(format!("creating the namespaces failed: {e}")),
    }
}

fn probe_cgroup_v2() -> Probe {
    let root = Path::new("/sys/fs/cgroup");
    let Ok(controllers) = fs::read_to_string(root.join("cgroup.controllers")) else {
        return Probe::Missing("no unified cgroup v2 hierarchy at /sys/fs/cgroup".into());
    };
    if !controllers.split_whitespace().any(|c| c == "memory") {
        return Probe::Missing("the cgroup v2 memory controller is not enabled".into());
    }
    Probe::Missing("cgroup v2 limits are not applied by this version of the sandbox".into())
}
