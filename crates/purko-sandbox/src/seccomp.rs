//! The seccomp filter: the system calls a contained script never needs are answered with an
//! error (`EPERM`), so the script sees an ordinary failure and the kernel code behind them is
//! never reached. Everything else is allowed: the other layers (namespaces, the read-only root,
//! Landlock, rlimits) do the confining, and a deny list keeps interpreters working unchanged.
//!
//! Invariant: no namespace can be created (`unshare`, `setns`, `clone` with a `CLONE_NEW*`
//! flag; `clone3`, whose flags a filter cannot read, answers `ENOSYS` so libc falls back to
//! `clone`), and no process can be traced or have its memory read.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use crate::error::{Error, Result};

/// System calls refused outright.
const DENIED: &[libc::c_long] = &[
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_pidfd_getfd,
    libc::SYS_kcmp,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_open_tree,
    libc::SYS_move_mount,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_perf_event_open,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_reboot,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_userfaultfd,
    libc::SYS_quotactl,
    libc::SYS_syslog,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_fanotify_init,
    libc::SYS_vhangup,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_iopl,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_ioperm,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_uselib,
];

/// `clone` flags that create namespaces.
const NAMESPACE_FLAGS: &[libc::c_int] = &[
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWCGROUP,
];

/// The two programs to install, in order: the deny list (`EPERM`), then `clone3` (`ENOSYS`).
#[derive(Debug)]
pub(crate) struct Filters {
    pub deny: BpfProgram,
    pub clone3: BpfProgram,
}

/// The filters, compiled once per process.
pub(crate) fn filters() -> Result<&'static Filters> {
    static FILTERS: std::sync::OnceLock<std::result::Result<Filters, String>> =
        std::sync::OnceLock::new();
    FILTERS
        .get_or_init(|| {
            compile().map_err(|e| match e {
                Error::Seccomp(reason) => reason,
                other => other.to_string(),
            })
        })
        .as_ref()
        .map_err(|e| Error::Seccomp(e.clone()))
}

fn compile() -> Result<Filters> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| Error::Seccomp(format!("unsupported architecture: {e}")))?;
    let seccomp = |e: seccompiler::BackendError| Error::Seccomp(e.to_string());

    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = DENIED.iter().map(|&n| (n, vec![])).collect();
    let mut clone = Vec::new();
    for &flag in NAMESPACE_FLAGS {
        #[expect(clippy::cast_sign_loss, reason = "clone flags are bit masks")]
        let flag = flag as u64;
        let condition = SeccompCondition::new(
            0,
            SeccompCmpArgLen::Qword,
            SeccompCmpOp::MaskedEq(flag),
            flag,
        )
        .map_err(seccomp)?;
        clone.push(SeccompRule::new(vec![condition]).map_err(seccomp)?);
    }
    rules.insert(libc::SYS_clone, clone);
    // Pushing characters into a terminal's input; there is no terminal, but say so twice.
    let tiocsti =
        SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, libc::TIOCSTI)
            .map_err(seccomp)?;
    rules.insert(
        libc::SYS_ioctl,
        vec![SeccompRule::new(vec![tiocsti]).map_err(seccomp)?],
    );
    let eperm = u32::try_from(libc::EPERM).unwrap_or(1);
    let deny = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(eperm),
        arch,
    )
    .map_err(seccomp)?;

    let enosys = u32::try_from(libc::ENOSYS).unwrap_or(38);
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, vec![])]),
        SeccompAction::Allow,
        SeccompAction::Errno(enosys),
        arch,
    )
    .map_err(seccomp)?;

    Ok(Filters {
        deny: deny.try_into().map_err(seccomp)?,
        clone3: clone3.try_into().map_err(seccomp)?,
    })
}
