//! Landlock, the second wall on the file system (and, from ABI 4, on TCP): the program may read
//! and execute anywhere in its root, write only beneath its writable paths and to the null
//! devices, and (with a proxied network) connect to the proxy's port only.
//!
//! The kernel's ABI is spoken directly rather than through a library: the rules name paths of
//! the new root, which exists only after the mounts, so they are added in the launcher between
//! fork and exec, where nothing may allocate.

#![allow(unsafe_code)]

use std::ffi::CString;
use std::path::PathBuf;

use libc::{c_int, c_void};

use crate::launch::PROXY_PORT;
use crate::plan::Network;
use crate::sys::{cstring, pid};

// Landlock's ABI (include/uapi/linux/landlock.h).
const LL_EXECUTE: u64 = 1 << 0;
const LL_WRITE_FILE: u64 = 1 << 1;
const LL_READ_FILE: u64 = 1 << 2;
const LL_READ_DIR: u64 = 1 << 3;
const LL_TRUNCATE: u64 = 1 << 14;
const LL_IOCTL_DEV: u64 = 1 << 15;
const LL_NET_BIND_TCP: u64 = 1 << 0;
const LL_NET_CONNECT_TCP: u64 = 1 << 1;
const LL_SCOPE_ABSTRACT_UNIX: u64 = 1 << 0;
const LL_SCOPE_SIGNAL: u64 = 1 << 1;
const LL_RULE_PATH_BENEATH: c_int = 1;
const LL_RULE_NET_PORT: c_int = 2;
const LL_CREATE_RULESET_VERSION: u32 = 1;

#[repr(C)]
struct RulesetAttr {
    handled_access_fs: u64,
    handled_access_net: u64,
    scoped: u64,
}

#[repr(C, packed)]
struct PathBeneath {
    allowed_access: u64,
    parent_fd: i32,
}

#[repr(C)]
struct NetPort {
    allowed_access: u64,
    port: u64,
}

pub(crate) struct Landlock {
    attr: RulesetAttr,
    /// Paths (inside the new root) and the access granted beneath each.
    paths: Vec<(CString, u64)>,
    /// The one TCP port the program may connect to (the proxy), when the network is proxied.
    connect_port: Option<u64>,
}

impl Landlock {
    pub(crate) fn new(abi: u32, writable: &[PathBuf], network: Network) -> Landlock {
        let fs_rights = |abi: u32| {
            let mut all: u64 = (1 << 13) - 1;
            if abi >= 2 {
                all |= 1 << 13; // REFER
            }
            if abi >= 3 {
                all |= LL_TRUNCATE;
            }
            if abi >= 5 {
                all |= LL_IOCTL_DEV;
            }
            all
        };
        let handled_fs = fs_rights(abi);
        let read = LL_EXECUTE | LL_READ_FILE | LL_READ_DIR;
        let device = (LL_READ_FILE | LL_WRITE_FILE | LL_TRUNCATE | LL_IOCTL_DEV) & handled_fs;
        let mut paths = vec![(c"/".to_owned(), read)];
        for dev in ["/dev/null", "/dev/zero", "/dev/full"] {
            paths.push((cstring(dev), device));
        }
        for path in writable {
            paths.push((cstring(path), handled_fs));
        }
        let networked = abi >= 4;
        Landlock {
            attr: RulesetAttr {
                handled_access_fs: handled_fs,
                handled_access_net: if networked {
                    LL_NET_BIND_TCP | LL_NET_CONNECT_TCP
                } else {
                    0
                },
                scoped: if abi >= 6 {
                    LL_SCOPE_ABSTRACT_UNIX | LL_SCOPE_SIGNAL
                } else {
                    0
                },
            },
            paths,
            connect_port: (networked && network == Network::Proxied)
                .then_some(u64::from(PROXY_PORT)),
        }
    }

    /// Restricts the calling process. Async-signal-safe: system calls on prepared data.
    pub(crate) fn apply(&self) -> c_int {
        let size = if self.attr.scoped != 0 {
            std::mem::size_of::<RulesetAttr>()
        } else if self.attr.handled_access_net != 0 {
            16
        } else {
            8
        };
        // SAFETY: landlock_create_ruleset reads `size` bytes of a live, repr(C) attribute.
        let ruleset = unsafe {
            libc::syscall(
                libc::SYS_landlock_create_ruleset,
                &raw const self.attr,
                size,
                0u32,
            )
        };
        if ruleset < 0 {
            return -1;
        }
        let ruleset = pid(ruleset);
        for (path, access) in &self.paths {
            // SAFETY: a NUL-terminated path prepared by the parent.
            let fd = unsafe { libc::open(path.as_ptr(), libc::O_PATH | libc::O_CLOEXEC) };
            if fd < 0 {
                continue; // a device the host lacks: nothing to grant.
            }
            let rule = PathBeneath {
                allowed_access: *access,
                parent_fd: fd,
            };
            // SAFETY: the kernel reads a packed path_beneath_attr from a live stack value.
            let added = unsafe {
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset,
                    LL_RULE_PATH_BENEATH,
                    &raw const rule,
                    0u32,
                )
            };
            // SAFETY: closing a descriptor this function opened.
            unsafe { libc::close(fd) };
            if added < 0 {
                return -1;
            }
        }
        if let Some(port) = self.connect_port {
            let rule = NetPort {
                allowed_access: LL_NET_CONNECT_TCP,
                port,
            };
            // SAFETY: the kernel reads a net_port_attr from a live stack value.
            let added = unsafe {
                libc::syscall(
                    libc::SYS_landlock_add_rule,
                    ruleset,
                    LL_RULE_NET_PORT,
                    &raw const rule,
                    0u32,
                )
            };
            if added < 0 {
                return -1;
            }
        }
        // SAFETY: restricting the calling thread with the ruleset just built.
        let restricted = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, ruleset, 0u32) };
        // SAFETY: the ruleset descriptor is ours.
        unsafe { libc::close(ruleset) };
        if restricted < 0 { -1 } else { 0 }
    }
}

/// The Landlock ABI version, asked of the kernel; `None` when Landlock is off.
pub(crate) fn abi() -> Option<u32> {
    // SAFETY: the version query takes no attribute.
    let abi = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<c_void>(),
            0usize,
            LL_CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(abi).ok().filter(|abi| *abi > 0)
}
