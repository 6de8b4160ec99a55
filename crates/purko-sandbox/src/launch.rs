//! The launcher: what runs between `fork` and `exec`, inside `std::process::Command`'s
//! `pre_exec` hook. It is the only unsafe code of Purko.
//!
//! Invariant: between fork and exec nothing allocates, locks or touches Rust's runtime. Every
//! path, file content, mapping, limit, Landlock rule and seccomp program is built by the parent
//! in [`Launch::new`]; the hook only makes system calls on that prepared data, and forks with the
//! raw `clone` system call (no libc fork handlers). Three processes take part:
//!
//! - **S** (the spawned child, in the host's PID namespace): drops to uid 65534 when started by
//!   root, creates the user, PID, mount, network, IPC, UTS and cgroup namespaces, writes its uid
//!   and gid maps, hands the proxy's listening socket to the parent when the network is proxied,
//!   forks P1, and waits for it. Killing S kills everything: P1 has `PR_SET_PDEATHSIG`, and
//!   when a PID namespace's first process dies the kernel kills the rest.
//! - **P1** (PID 1 of the new namespace): builds the new root on a tmpfs (read-only binds of the
//!   interpreter's directories, a fresh `/proc`, a minimal `/dev`, a tmpfs per writable path,
//!   the program text), remounts it read-only, pivots into it, forks P2, then reaps every
//!   process until P2 ends or the deadline passes, kills the namespace and reports P2's status,
//!   peak memory and CPU time on the report pipe.
//! - **P2**: a new session, the rlimits, `no_new_privs`, Landlock, seccomp; then `std` execs the
//!   interpreter as uid 65534, which drops every capability.

#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use libc::{c_int, c_void};

use crate::landlock::Landlock;
use crate::plan::{CODE_DIR, Network, Plan};
use crate::seccomp::Filters;
use crate::sys::{
    add, create_file, cstring, failed_if, loopback_up, micros, now, pid, proxy_listener, raw_fork,
    remount_read_only, send_fd, sub, write_file,
};

/// The uid and gid the program runs as, inside and (when Purko runs as root) outside.
pub(crate) const NOBODY: u32 = 65534;
/// Where the egress proxy listens inside the sandbox's network namespace.
pub(crate) const PROXY_PORT: u16 = 3128;
/// The host directory the new root is assembled on, inside the private mount namespace.
const STAGE: &CStr = c"/tmp";

/// The steps of the launch, named in the report when one fails.
pub(crate) const STEPS: &[&str] = &[
    "dropping to uid 65534",
    "making the launcher dumpable",
    "setting the parent-death signal",
    "creating the namespaces",
    "writing the uid and gid maps",
    "bringing up loopback",
    "opening the proxy socket",
    "handing the proxy socket to Purko",
    "forking",
    "making mounts private",
    "mounting the root tmpfs",
    "creating a directory",
    "creating a symlink",
    "writing a file",
    "bind-mounting a system directory",
    "remounting read-only",
    "mounting a writable tmpfs",
    "mounting /proc",
    "pivoting into the new root",
    "setting the host name",
    "starting a session",
    "setting an rlimit",
    "entering the working directory",
    "setting no_new_privs",
    "applying Landlock",
    "applying the seccomp filter",
];

#[derive(Clone, Copy)]
#[repr(u32)]
enum Step {
    Drop,
    Dumpable,
    DeathSignal,
    Unshare,
    Maps,
    Loopback,
    ProxySocket,
    SendSocket,
    Fork,
    Private,
    RootTmpfs,
    Mkdir,
    Symlink,
    WriteFile,
    Bind,
    Remount,
    Tmpfs,
    Proc,
    Pivot,
    Hostname,
    Session,
    Rlimit,
    Chdir,
    NoNewPrivs,
    Landlock,
    Seccomp,
}

/// What P1 writes on the report pipe: a failed step, or how P2 ended.
#[derive(Clone, Copy, Debug, Default)]
#[repr(C)]
pub(crate) struct Report {
    /// 1: a step failed; 2: P2 ended.
    pub kind: u32,
    pub step: u32,
    pub errno: i32,
    /// P2's wait status.
    pub status: i32,
    /// 1 when P1 killed the namespace at the deadline.
    pub timed_out: u32,
    pub _pad: u32,
    /// The largest resident set among P2 and the processes P1 reaped, KiB.
    pub max_rss_kib: i64,
    /// CPU time (user and system) of the same, microseconds.
    pub cpu_micros: i64,
}

pub(crate) const REPORT_FAILED: u32 = 1;
pub(crate) const REPORT_ENDED: u32 = 2;
pub(crate) const REPORT_SIZE: usize = std::mem::size_of::<Report>();

impl Report {
    pub(crate) fn from_bytes(bytes: &[u8; REPORT_SIZE]) -> Report {
        // SAFETY: Report is repr(C) plain data of integers; every bit pattern is valid, and
        // read_unaligned copes with the byte buffer's alignment.
        unsafe { std::ptr::read_unaligned(bytes.as_ptr().cast::<Report>()) }
    }
}

enum Op {
    Dir(CString),
    Symlink {
        target: CString,
        link: CString,
    },
    File {
        path: CString,
        contents: Vec<u8>,
    },
    /// A read-only bind (a device node when `device`: kept writable, no remount).
    Bind {
        src: CString,
        dst: CString,
        device: bool,
    },
    Tmpfs {
        dst: CString,
        options: CString,
    },
    Proc(CString),
}

/// Everything the hook needs, prepared before the fork.
pub(crate) struct Launch {
    ops: Vec<Op>,
    root_options: CString,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    drop_to_nobody: bool,
    /// S's end of the socket pair on which the proxy's listening socket is handed over.
    proxy_handover: Option<RawFd>,
    /// The write end of the report pipe.
    report: RawFd,
    rlimits: Vec<(libc::__rlimit_resource_t, libc::rlimit)>,
    workdir: CString,
    landlock: Option<Landlock>,
    filters: Option<&'static Filters>,
    wall_clock: libc::timespec,
}

impl Launch {
    pub(crate) fn new(
        plan: &Plan,
        code: &str,
        report: RawFd,
        proxy_handover: Option<RawFd>,
        filters: Option<&'static Filters>,
    ) -> Launch {
        // SAFETY: geteuid and getegid cannot fail.
        let (euid, egid) = unsafe { (libc::geteuid(), libc::getegid()) };
        let drop_to_nobody = euid == 0;
        let (outer_uid, outer_gid) = if drop_to_nobody {
            (NOBODY, NOBODY)
        } else {
            (euid, egid)
        };
        let limits = &plan.limits;
        let tmpfs_options = cstring(format!(
            "size={},nr_inodes=4096,mode=0755",
            limits.tmpfs_bytes
        ));
        let mut ops = Vec::new();
        system_ops(&mut ops, plan.network);
        let extension = match plan.language {
            purko_config::Language::Python => "py",
            purko_config::Language::Bash => "sh",
        };
        let code_dir = CODE_DIR.trim_start_matches('/');
        ops.push(Op::Dir(cstring(code_dir)));
        ops.push(Op::File {
            path: cstring(format!("{code_dir}/main.{extension}")),
            contents: code.as_bytes().to_vec(),
        });
        for path in &plan.writable_paths {
            let mut relative = PathBuf::new();
            for part in path.iter().skip(1) {
                relative.push(part);
                ops.push(Op::Dir(cstring(&relative)));
            }
            ops.push(Op::Tmpfs {
                dst: cstring(&relative),
                options: tmpfs_options.clone(),
            });
        }
        let cpu = limits.cpu_seconds;
        let wanted = [
            (libc::RLIMIT_AS, limits.memory_bytes, limits.memory_bytes),
            (libc::RLIMIT_CPU, cpu, cpu + 1),
            (libc::RLIMIT_NPROC, limits.processes, limits.processes),
            (libc::RLIMIT_NOFILE, limits.open_files, limits.open_files),
            (
                libc::RLIMIT_FSIZE,
                limits.file_size_bytes,
                limits.file_size_bytes,
            ),
            (libc::RLIMIT_CORE, 0, 0),
            (libc::RLIMIT_MEMLOCK, 64 << 10, 64 << 10),
            (libc::RLIMIT_MSGQUEUE, 0, 0),
        ];
        // Limits can only be lowered: never ask for more than the current hard limit.
        let rlimits = wanted
            .into_iter()
            .map(|(resource, soft, hard)| {
                let mut current = libc::rlimit {
                    rlim_cur: 0,
                    rlim_max: libc::RLIM_INFINITY,
                };
                // SAFETY: getrlimit writes into a live rlimit.
                if unsafe { libc::getrlimit(resource, &raw mut current) } != 0 {
                    current.rlim_max = libc::RLIM_INFINITY;
                }
                let max = current.rlim_max;
                let hard = hard.min(max);
                (
                    resource,
                    libc::rlimit {
                        rlim_cur: soft.min(hard),
                        rlim_max: hard,
                    },
                )
            })
            .collect();
        let root_size = code.len() + loader_cache().map_or(0, Vec::len) + (1 << 20);
        Launch {
            ops,
            root_options: cstring(format!("size={root_size},nr_inodes=1024,mode=0755")),
            uid_map: format!("{NOBODY} {outer_uid} 1\n").into_bytes(),
            gid_map: format!("{NOBODY} {outer_gid} 1\n").into_bytes(),
            drop_to_nobody,
            proxy_handover,
            report,
            rlimits,
            workdir: plan
                .writable_paths
                .first()
                .map_or_else(|| c"/".to_owned(), cstring),
            landlock: plan
                .landlock_abi
                .map(|abi| Landlock::new(abi, &plan.writable_paths, plan.network)),
            filters,
            wall_clock: libc::timespec {
                tv_sec: libc::time_t::try_from(limits.wall_clock.as_secs())
                    .unwrap_or(libc::time_t::MAX),
                tv_nsec: libc::c_long::from(limits.wall_clock.subsec_nanos()),
            },
        }
    }

    /// Runs in S, between fork and exec. Returns only in P2 (`Ok`: exec the interpreter) or on
    /// a failure (which `std` reports to the parent); S and P1 end with `_exit`.
    pub(crate) fn enter(&self) -> io::Result<()> {
        if self.drop_to_nobody {
            let id = NOBODY;
            // Raw system calls: glibc's wrappers would try to signal the parent's threads.
            // SAFETY: plain system calls changing this process's credentials.
            let dropped = unsafe {
                libc::syscall(libc::SYS_setgroups, 0usize, std::ptr::null::<libc::gid_t>())
                    | libc::syscall(libc::SYS_setresgid, id, id, id)
                    | libc::syscall(libc::SYS_setresuid, id, id, id)
            };
            self.check(Step::Drop, failed_if(dropped < 0))?;
        }
        // A credential change made S non-dumpable, which would leave /proc/self/uid_map owned
        // by root; the parent-death signal is cleared by it, so both come after.
        // SAFETY: prctl with integer arguments.
        self.check(Step::Dumpable, unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 1, 0, 0, 0)
        })?;
        // SAFETY: prctl with integer arguments.
        self.check(Step::DeathSignal, unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0)
        })?;
        let namespaces = libc::CLONE_NEWUSER
            | libc::CLONE_NEWNS
            | libc::CLONE_NEWPID
            | libc::CLONE_NEWNET
            | libc::CLONE_NEWIPC
            | libc::CLONE_NEWUTS
            | libc::CLONE_NEWCGROUP;
        // SAFETY: unshare takes flags only.
        self.check(Step::Unshare, unsafe { libc::unshare(namespaces) })?;
        // Kernels before 3.19, and gVisor, have no setgroups file: nothing to deny there.
        if write_file(c"/proc/self/setgroups", b"deny") != 0
            && io::Error::last_os_error().raw_os_error() != Some(libc::ENOENT)
        {
            self.check(Step::Maps, -1)?;
        }
        self.check(
            Step::Maps,
            write_file(c"/proc/self/uid_map", &self.uid_map)
                | write_file(c"/proc/self/gid_map", &self.gid_map),
        )?;
        if let Some(handover) = self.proxy_handover {
            self.check(Step::Loopback, loopback_up())?;
            let listener = proxy_listener();
            self.check(Step::ProxySocket, listener)?;
            self.check(Step::SendSocket, send_fd(handover, listener))?;
            // SAFETY: both descriptors are S's own; the parent holds its copy of the listener.
            unsafe {
                libc::close(listener);
                libc::close(handover);
            }
        }
        let p1 = raw_fork();
        self.check(Step::Fork, failed_if(p1 < 0))?;
        if p1 > 0 {
            // S: keep nothing open (the parent sees end of output once P1's tree is gone), wait.
            // SAFETY: closing every descriptor of this process, then waiting for its child.
            unsafe {
                libc::syscall(libc::SYS_close_range, 0u32, u32::MAX, 0u32);
                let mut status = 0;
                while libc::waitpid(pid(p1), &raw mut status, 0) < 0
                    && *libc::__errno_location() == libc::EINTR
                {}
                libc::_exit(0)
            }
        }
        self.first()
    }

    /// P1: PID 1 of the new namespace.
    fn first(&self) -> io::Result<()> {
        // SAFETY: prctl with integer arguments.
        self.check(Step::DeathSignal, unsafe {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0)
        })?;
        // P1 never execs: its memory and /proc/1/environ are a copy of Purko's. Not dumpable,
        // they are closed to the program, which runs as the same uid without capabilities.
        // SAFETY: prctl with integer arguments.
        self.check(Step::Dumpable, unsafe {
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0)
        })?;
        // SAFETY: mount and chdir on prepared, NUL-terminated strings.
        unsafe {
            self.check(
                Step::Private,
                libc::mount(
                    std::ptr::null(),
                    c"/".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REC | libc::MS_PRIVATE,
                    std::ptr::null(),
                ),
            )?;
            self.check(
                Step::RootTmpfs,
                libc::mount(
                    c"tmpfs".as_ptr(),
                    STAGE.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_NOSUID | libc::MS_NODEV,
                    self.root_options.as_ptr().cast(),
                ) | libc::chdir(STAGE.as_ptr()),
            )?;
        }
        for op in &self.ops {
            self.apply(op)?;
        }
        // SAFETY: mount, pivot_root, umount2, chdir and sethostname on static strings.
        unsafe {
            self.check(
                Step::Remount,
                libc::mount(
                    std::ptr::null(),
                    c".".as_ptr(),
                    std::ptr::null(),
                    libc::MS_REMOUNT
                        | libc::MS_BIND
                        | libc::MS_RDONLY
                        | libc::MS_NOSUID
                        | libc::MS_NODEV,
                    std::ptr::null(),
                ),
            )?;
            let pivoted = libc::syscall(libc::SYS_pivot_root, c".".as_ptr(), c".".as_ptr());
            self.check(
                Step::Pivot,
                failed_if(pivoted < 0)
                    | libc::umount2(c".".as_ptr(), libc::MNT_DETACH)
                    | libc::chdir(c"/".as_ptr()),
            )?;
            self.check(Step::Hostname, libc::sethostname(c"sandbox".as_ptr(), 7))?;
        }
        // SIGCHLD stays blocked so P1 can wait for it with a deadline (sigtimedwait).
        // SAFETY: signal-set manipulation on stack values.
        let mut children: libc::sigset_t = unsafe { std::mem::zeroed() };
        unsafe {
            libc::sigemptyset(&raw mut children);
            libc::sigaddset(&raw mut children, libc::SIGCHLD);
            libc::sigprocmask(libc::SIG_BLOCK, &raw const children, std::ptr::null_mut());
        }
        let p2 = raw_fork();
        self.check(Step::Fork, failed_if(p2 < 0))?;
        if p2 == 0 {
            return self.second();
        }
        // SAFETY: closing every descriptor but the report pipe (which ends P1's hold on std's
        // exec-error pipe, so the parent's spawn returns once P2 has exec'd).
        unsafe {
            let report = u32::try_from(self.report).unwrap_or(u32::MAX);
            libc::syscall(libc::SYS_close_range, 0u32, report.saturating_sub(1), 0u32);
            libc::syscall(libc::SYS_close_range, report + 1, u32::MAX, 0u32);
        }
        self.reap(pid(p2), &children)
    }

    /// P1 after the fork: reaps every process until P2 ends or the deadline passes.
    fn reap(&self, p2: libc::pid_t, children: &libc::sigset_t) -> ! {
        let mut report = Report {
            kind: REPORT_ENDED,
            ..Report::default()
        };
        let deadline = add(now(), self.wall_clock);
        'watch: loop {
            loop {
                let mut status = 0;
                // SAFETY: waitpid writes into a stack integer.
                let pid = unsafe { libc::waitpid(-1, &raw mut status, libc::WNOHANG) };
                if pid == p2 {
                    report.status = status;
                    break 'watch;
                }
                if pid <= 0 {
                    break;
                }
            }
            let left = sub(deadline, now());
            if left.tv_sec < 0 || (left.tv_sec == 0 && left.tv_nsec == 0) {
                report.timed_out = 1;
                // SAFETY: kill every other process of this PID namespace, then wait for P2.
                unsafe {
                    libc::kill(-1, libc::SIGKILL);
                    let mut status = 0;
                    while libc::waitpid(p2, &raw mut status, 0) < 0
                        && *libc::__errno_location() == libc::EINTR
                    {}
                    report.status = status;
                }
                break;
            }
            // SAFETY: waits for SIGCHLD (blocked) at most `left`.
            unsafe { libc::sigtimedwait(children, std::ptr::null_mut(), &raw const left) };
        }
        // SAFETY: getrusage writes into a stack struct.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &raw mut usage) };
        report.max_rss_kib = usage.ru_maxrss;
        report.cpu_micros = micros(usage.ru_utime) + micros(usage.ru_stime);
        self.send(&report);
        // SAFETY: ending P1 ends the namespace: the kernel kills whatever is left in it.
        unsafe { libc::_exit(0) }
    }

    /// P2: limits and filters, then back to `std`, which execs the interpreter.
    fn second(&self) -> io::Result<()> {
        // SAFETY: resetting the signal mask, starting a session, setting limits, chdir and
        // prctl: system calls on prepared data.
        unsafe {
            let mut none: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&raw mut none);
            libc::sigprocmask(libc::SIG_SETMASK, &raw const none, std::ptr::null_mut());
            self.check(Step::Session, libc::setsid())?;
            // Whatever Purko holds open without close-on-exec (a library's file, another
            // run's pipe) is closed at exec: only standard input, output and error pass.
            libc::syscall(
                libc::SYS_close_range,
                3u32,
                u32::MAX,
                libc::CLOSE_RANGE_CLOEXEC,
            );
            for (resource, limit) in &self.rlimits {
                self.check(Step::Rlimit, libc::setrlimit(*resource, limit))?;
            }
            self.check(Step::Chdir, libc::chdir(self.workdir.as_ptr()))?;
            self.check(
                Step::NoNewPrivs,
                libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0),
            )?;
        }
        if let Some(landlock) = &self.landlock {
            self.check(Step::Landlock, landlock.apply())?;
        }
        if let Some(filters) = self.filters {
            for program in [&filters.deny, &filters.clone3] {
                if seccompiler::apply_filter(program).is_err() {
                    self.check(Step::Seccomp, -1)?;
                }
            }
        }
        Ok(())
    }

    fn apply(&self, op: &Op) -> io::Result<()> {
        // SAFETY: file-system system calls on NUL-terminated strings prepared by the parent.
        unsafe {
            match op {
                Op::Dir(path) => {
                    if libc::mkdir(path.as_ptr(), 0o755) != 0
                        && *libc::__errno_location() != libc::EEXIST
                    {
                        self.check(Step::Mkdir, -1)?;
                    }
                }
                Op::Symlink { target, link } => {
                    self.check(Step::Symlink, libc::symlink(target.as_ptr(), link.as_ptr()))?;
                }
                Op::File { path, contents } => {
                    self.check(Step::WriteFile, create_file(path, contents))?;
                }
                Op::Bind { src, dst, device } => {
                    self.check(
                        Step::Bind,
                        libc::mount(
                            src.as_ptr(),
                            dst.as_ptr(),
                            std::ptr::null(),
                            libc::MS_BIND | libc::MS_REC,
                            std::ptr::null(),
                        ),
                    )?;
                    if !device {
                        self.check(Step::Remount, remount_read_only(dst))?;
                    }
                }
                Op::Tmpfs { dst, options } => {
                    self.check(
                        Step::Tmpfs,
                        libc::mount(
                            c"tmpfs".as_ptr(),
                            dst.as_ptr(),
                            c"tmpfs".as_ptr(),
                            libc::MS_NOSUID | libc::MS_NODEV,
                            options.as_ptr().cast(),
                        ),
                    )?;
                }
                Op::Proc(dst) => {
                    self.check(
                        Step::Proc,
                        libc::mount(
                            c"proc".as_ptr(),
                            dst.as_ptr(),
                            c"proc".as_ptr(),
                            libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                            std::ptr::null(),
                        ),
                    )?;
                }
            }
        }
        Ok(())
    }

    /// On a failed call (`-1`), reports the step and the errno, and fails the hook.
    fn check(&self, step: Step, result: c_int) -> io::Result<()> {
        if result >= 0 {
            return Ok(());
        }
        let error = io::Error::last_os_error();
        self.send(&Report {
            kind: REPORT_FAILED,
            step: step as u32,
            errno: error.raw_os_error().unwrap_or(0),
            ..Report::default()
        });
        Err(error)
    }

    fn send(&self, report: &Report) {
        // SAFETY: writes the bytes of a live repr(C) value; a report fits PIPE_BUF, so it is
        // written whole.
        unsafe {
            libc::write(
                self.report,
                std::ptr::from_ref(report).cast::<c_void>(),
                REPORT_SIZE,
            );
        }
    }
}

/// The read-only system directories, `/proc`, `/dev` and `/etc` of the new root (relative to
/// the stage). Host directories that are symlinks (merged /usr) are recreated as symlinks.
fn system_ops(ops: &mut Vec<Op>, network: Network) {
    for dir in [
        "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
    ] {
        mirror(ops, Path::new(dir), false);
    }
    ops.push(Op::Dir(c"proc".to_owned()));
    ops.push(Op::Proc(c"proc".to_owned()));
    ops.push(Op::Dir(c"dev".to_owned()));
    for dev in ["null", "zero", "full", "random", "urandom"] {
        let path = Path::new("/dev").join(dev);
        if path.exists() {
            ops.push(Op::File {
                path: cstring(format!("dev/{dev}")),
                contents: Vec::new(),
            });
            ops.push(Op::Bind {
                src: cstring(&path),
                dst: cstring(format!("dev/{dev}")),
                device: true,
            });
        }
    }
    for (link, target) in [
        ("dev/fd", "/proc/self/fd"),
        ("dev/stdin", "/proc/self/fd/0"),
        ("dev/stdout", "/proc/self/fd/1"),
        ("dev/stderr", "/proc/self/fd/2"),
    ] {
        ops.push(Op::Symlink {
            target: cstring(target),
            link: cstring(link),
        });
    }
    ops.push(Op::Dir(c"etc".to_owned()));
    let id = NOBODY;
    for (name, contents) in [
        (
            "etc/passwd",
            format!("nobody:x:{id}:{id}:nobody:/nonexistent:/usr/sbin/nologin\n"),
        ),
        ("etc/group", format!("nogroup:x:{id}:\n")),
        (
            "etc/hosts",
            "127.0.0.1 localhost\n::1 localhost\n".to_owned(),
        ),
        ("etc/hostname", "sandbox\n".to_owned()),
    ] {
        ops.push(Op::File {
            path: cstring(name),
            contents: contents.into_bytes(),
        });
    }
    // The loader's cache is copied rather than bound: two mounts fewer per run.
    if let Some(cache) = loader_cache() {
        ops.push(Op::File {
            path: c"etc/ld.so.cache".to_owned(),
            contents: cache.clone(),
        });
    }
    mirror(ops, Path::new("/etc/localtime"), false);
    mirror(ops, Path::new("/etc/alternatives"), false);
    // Certificates matter only where HTTPS can leave.
    if network == Network::Proxied {
        mirror(ops, Path::new("/etc/ssl"), false);
        mirror(ops, Path::new("/etc/ca-certificates"), false);
    }
    ops.push(Op::Dir(c"tmp".to_owned()));
}

/// The host's `/etc/ld.so.cache`, read once.
fn loader_cache() -> Option<&'static Vec<u8>> {
    static CACHE: OnceLock<Option<Vec<u8>>> = OnceLock::new();
    CACHE
        .get_or_init(|| std::fs::read("/etc/ld.so.cache").ok())
        .as_ref()
}

/// Recreates `host` in the new root: a symlink as the same symlink, a directory or file as a
/// read-only bind; nothing when it does not exist.
fn mirror(ops: &mut Vec<Op>, host: &Path, device: bool) {
    let Ok(meta) = host.symlink_metadata() else {
        return;
    };
    let inside = host.strip_prefix("/").unwrap_or(host);
    if meta.file_type().is_symlink() {
        if let Ok(target) = std::fs::read_link(host) {
            ops.push(Op::Symlink {
                target: cstring(target),
                link: cstring(inside),
            });
        }
        return;
    }
    if meta.is_dir() {
        ops.push(Op::Dir(cstring(inside)));
    } else {
        ops.push(Op::File {
            path: cstring(inside),
            contents: Vec::new(),
        });
    }
    ops.push(Op::Bind {
        src: cstring(host),
        dst: cstring(inside),
        device,
    });
}
