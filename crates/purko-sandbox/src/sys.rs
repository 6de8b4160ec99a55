//! Small system-call helpers for the launcher, each async-signal-safe (system calls on data
//! prepared beforehand), and the probes of the host's features.

#![allow(unsafe_code)]

use std::ffi::{CStr, CString};
use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;

use libc::{c_int, c_long, c_ulong};

use crate::launch::{NOBODY, PROXY_PORT};

/// A pid or descriptor returned as a `long` by `syscall`, as an `int` (`-1` if it cannot be).
pub(crate) fn pid(value: c_long) -> c_int {
    c_int::try_from(value).unwrap_or(-1)
}

/// `-1` (a failed call) or `0`, for system calls whose result is not an `int`.
pub(crate) fn failed_if(failed: bool) -> c_int {
    if failed { -1 } else { 0 }
}

pub(crate) fn cstring(text: impl AsRef<std::ffi::OsStr>) -> CString {
    // Paths and options built here never hold NUL; a path that did could not be mounted anyway.
    CString::new(text.as_ref().as_bytes()).unwrap_or_default()
}

/// A read-only remount of a bind that keeps the flags the kernel locked on the source mount
/// (nosuid, nodev, noexec, atime), which a user namespace may not clear.
///
/// # Safety
/// `dst` is a NUL-terminated path.
pub(crate) unsafe fn remount_read_only(dst: &CStr) -> c_int {
    // SAFETY: statvfs writes into a stack struct; mount reads NUL-terminated strings.
    unsafe {
        // glibc's statvfs takes the flags from statfs(2) (ST_VALID), without reading
        // /proc/mounts, so it stays a single system call here.
        let mut fs: libc::statvfs = std::mem::zeroed();
        if libc::statvfs(dst.as_ptr(), &raw mut fs) != 0 {
            return -1;
        }
        let held = fs.f_flag;
        let mut flags = libc::MS_REMOUNT | libc::MS_BIND | libc::MS_RDONLY | libc::MS_NOSUID;
        for (st, ms) in [
            (libc::ST_NODEV, libc::MS_NODEV),
            (libc::ST_NOEXEC, libc::MS_NOEXEC),
            (libc::ST_NOATIME, libc::MS_NOATIME),
            (libc::ST_NODIRATIME, libc::MS_NODIRATIME),
            (libc::ST_RELATIME, libc::MS_RELATIME),
        ] {
            if held & st != 0 {
                flags |= ms;
            }
        }
        libc::mount(
            std::ptr::null(),
            dst.as_ptr(),
            std::ptr::null(),
            flags,
            std::ptr::null(),
        )
    }
}

pub(crate) fn write_file(path: &CStr, contents: &[u8]) -> c_int {
    // SAFETY: open, write and close on a NUL-terminated path and a live buffer.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd < 0 {
            return -1;
        }
        let written = libc::write(fd, contents.as_ptr().cast(), contents.len());
        libc::close(fd);
        if usize::try_from(written).ok() == Some(contents.len()) {
            0
        } else {
            -1
        }
    }
}

pub(crate) fn create_file(path: &CStr, contents: &[u8]) -> c_int {
    // SAFETY: open, write and close on a NUL-terminated path and a live buffer.
    unsafe {
        let fd = libc::open(
            path.as_ptr(),
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_CLOEXEC,
            0o644,
        );
        if fd < 0 {
            return -1;
        }
        let mut rest = contents;
        while !rest.is_empty() {
            let written = libc::write(fd, rest.as_ptr().cast(), rest.len());
            let Ok(written) = usize::try_from(written) else {
                libc::close(fd);
                return -1;
            };
            rest = &rest[written..];
        }
        libc::close(fd)
    }
}

/// The kernel's `struct ifreq`, as far as the flags ioctls need it.
#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    _rest: [u8; 22],
}

pub(crate) fn loopback_up() -> c_int {
    // SAFETY: a socket for the interface ioctls, on a stack ifreq.
    unsafe {
        let socket = libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0);
        if socket < 0 {
            return -1;
        }
        let mut request = IfReq {
            name: [0; 16],
            flags: 0,
            _rest: [0; 22],
        };
        request.name[..2].copy_from_slice(b"lo");
        let mut result = libc::ioctl(socket, libc::SIOCGIFFLAGS, &raw mut request);
        if result == 0 {
            request.flags |= libc::c_short::try_from(libc::IFF_UP).unwrap_or(1);
            result = libc::ioctl(socket, libc::SIOCSIFFLAGS, &raw const request);
        }
        libc::close(socket);
        result
    }
}

/// A TCP socket listening on 127.0.0.1:3128 of the sandbox's network namespace.
pub(crate) fn proxy_listener() -> c_int {
    // SAFETY: socket, setsockopt, bind and listen on stack values.
    unsafe {
        let fd = libc::socket(libc::AF_INET, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0);
        if fd < 0 {
            return -1;
        }
        let address = libc::sockaddr_in {
            sin_family: libc::sa_family_t::try_from(libc::AF_INET).unwrap_or(2),
            sin_port: PROXY_PORT.to_be(),
            sin_addr: libc::in_addr {
                s_addr: u32::from_ne_bytes([127, 0, 0, 1]),
            },
            sin_zero: [0; 8],
        };
        let bound = libc::bind(
            fd,
            (&raw const address).cast(),
            libc::socklen_t::try_from(std::mem::size_of::<libc::sockaddr_in>()).unwrap_or(16),
        );
        if bound != 0 || libc::listen(fd, 64) != 0 {
            libc::close(fd);
            return -1;
        }
        fd
    }
}

/// Room for one `SCM_RIGHTS` control message with one descriptor, suitably aligned.
#[repr(C, align(8))]
struct ControlBuffer([u8; 64]);

pub(crate) fn send_fd(socket: RawFd, fd: RawFd) -> c_int {
    // SAFETY: sendmsg with a message header, one-byte payload and control buffer on the stack;
    // the CMSG macros stay within the buffer, whose size covers CMSG_SPACE(sizeof(int)).
    unsafe {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = ControlBuffer([0; 64]);
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &raw mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.0.as_mut_ptr().cast();
        message.msg_controllen = libc::CMSG_SPACE(4) as _;
        let header = libc::CMSG_FIRSTHDR(&raw const message);
        (*header).cmsg_level = libc::SOL_SOCKET;
        (*header).cmsg_type = libc::SCM_RIGHTS;
        (*header).cmsg_len = libc::CMSG_LEN(4) as _;
        std::ptr::write_unaligned(libc::CMSG_DATA(header).cast::<c_int>(), fd);
        if libc::sendmsg(socket, &raw const message, 0) == 1 {
            0
        } else {
            -1
        }
    }
}

/// Receives the descriptor [`send_fd`] sent (in the parent, a normal thread).
pub(crate) fn receive_fd(socket: &OwnedFd) -> io::Result<OwnedFd> {
    // SAFETY: recvmsg into stack buffers; the descriptor is taken only from an SCM_RIGHTS
    // message of the expected length, and owned from then on.
    unsafe {
        let mut byte = [0u8; 1];
        let mut iov = libc::iovec {
            iov_base: byte.as_mut_ptr().cast(),
            iov_len: 1,
        };
        let mut control = ControlBuffer([0; 64]);
        let mut message: libc::msghdr = std::mem::zeroed();
        message.msg_iov = &raw mut iov;
        message.msg_iovlen = 1;
        message.msg_control = control.0.as_mut_ptr().cast();
        message.msg_controllen = control.0.len() as _;
        let received = libc::recvmsg(socket.as_raw_fd(), &raw mut message, libc::MSG_CMSG_CLOEXEC);
        if received < 0 {
            return Err(io::Error::last_os_error());
        }
        let header = libc::CMSG_FIRSTHDR(&raw const message);
        if received == 0
            || header.is_null()
            || (*header).cmsg_level != libc::SOL_SOCKET
            || (*header).cmsg_type != libc::SCM_RIGHTS
        {
            return Err(io::Error::other("the sandbox sent no proxy socket"));
        }
        let fd = std::ptr::read_unaligned(libc::CMSG_DATA(header).cast::<c_int>());
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// `fork` as the bare system call: no libc fork handlers, which must not run in a child of a
/// multi-threaded process.
pub(crate) fn raw_fork() -> c_long {
    // SAFETY: clone with only SIGCHLD and no new stack behaves as fork.
    unsafe {
        libc::syscall(
            libc::SYS_clone,
            c_ulong::try_from(libc::SIGCHLD).unwrap_or(17),
            0usize,
            0usize,
            0usize,
            0usize,
        )
    }
}

pub(crate) fn now() -> libc::timespec {
    let mut time = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes into a stack timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &raw mut time) };
    time
}

pub(crate) fn add(a: libc::timespec, b: libc::timespec) -> libc::timespec {
    let mut sum = libc::timespec {
        tv_sec: a.tv_sec.saturating_add(b.tv_sec),
        tv_nsec: a.tv_nsec + b.tv_nsec,
    };
    if sum.tv_nsec >= 1_000_000_000 {
        sum.tv_sec += 1;
        sum.tv_nsec -= 1_000_000_000;
    }
    sum
}

pub(crate) fn sub(a: libc::timespec, b: libc::timespec) -> libc::timespec {
    let mut difference = libc::timespec {
        tv_sec: a.tv_sec - b.tv_sec,
        tv_nsec: a.tv_nsec - b.tv_nsec,
    };
    if difference.tv_nsec < 0 {
        difference.tv_sec -= 1;
        difference.tv_nsec += 1_000_000_000;
    }
    if difference.tv_sec < 0 {
        difference.tv_sec = 0;
        difference.tv_nsec = 0;
    }
    difference
}

pub(crate) fn micros(time: libc::timeval) -> i64 {
    time.tv_sec * 1_000_000 + time.tv_usec
}

/// Whether the kernel has seccomp (`PR_GET_SECCOMP` fails with EINVAL where it does not).
pub(crate) fn seccomp_available() -> bool {
    // SAFETY: prctl with integer arguments.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// Creates the sandbox's namespaces once, the way S does, in a throwaway child.
pub(crate) fn try_namespaces() -> io::Result<()> {
    // SAFETY: geteuid cannot fail.
    let root = unsafe { libc::geteuid() } == 0;
    let child = raw_fork();
    if child < 0 {
        return Err(io::Error::last_os_error());
    }
    if child == 0 {
        // SAFETY: the child only makes system calls and exits; it never returns.
        unsafe {
            if root
                && (libc::syscall(libc::SYS_setresgid, NOBODY, NOBODY, NOBODY) != 0
                    || libc::syscall(libc::SYS_setresuid, NOBODY, NOBODY, NOBODY) != 0)
            {
                libc::_exit(100);
            }
            let flags = libc::CLONE_NEWUSER
                | libc::CLONE_NEWNS
                | libc::CLONE_NEWPID
                | libc::CLONE_NEWNET
                | libc::CLONE_NEWIPC
                | libc::CLONE_NEWUTS;
            if libc::unshare(flags) != 0 {
                libc::_exit(*libc::__errno_location() & 0x7f);
            }
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for the child just forked.
    unsafe { libc::waitpid(pid(child), &raw mut status, 0) };
    match libc::WEXITSTATUS(status) {
        0 => Ok(()),
        100 => Err(io::Error::other("dropping to uid 65534 failed")),
        errno => Err(io::Error::from_raw_os_error(errno)),
    }
}
