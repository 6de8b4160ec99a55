//! The runner: spawns a [`Plan`] through the launcher, serves the egress proxy while the code
//! runs, captures its output within the limit, enforces the deadline and reports the outcome.
//!
//! Invariant: the sandbox's process tree never outlives a run. P1 kills its namespace at the
//! deadline; the runner keeps a backstop a little later, and kills the launcher (whose death
//! takes P1 and so the whole namespace with it) through a pidfd, so no recycled pid is hit.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use purko_config::Language;
use purko_http::Egress;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::sync::{Notify, oneshot};

use crate::error::{Error, Result};
use crate::launch::{Launch, PROXY_PORT, REPORT_ENDED, REPORT_FAILED, REPORT_SIZE, Report, STEPS};
use crate::outcome::{Limit, Outcome, limit_from, signal_name, truncation_marker};
use crate::plan::{CODE_DIR, Network, Plan};

/// How long after the deadline the runner kills the launcher itself, should P1 not have.
const BACKSTOP: Duration = Duration::from_secs(2);
/// How much output past the limit is read and dropped before the run is stopped for flooding.
const FLOOD_ALLOWANCE: usize = 1 << 20;

/// Runs `code` as planned. `egress` is the agent's guard; it is needed when the plan allows the
/// network. A program that fails, crashes or hits a limit is an [`Outcome`], not an error.
#[allow(unsafe_code)]
pub async fn run(plan: &Plan, code: &str, egress: Option<&Egress>) -> Result<Outcome> {
    let started = Instant::now();
    let egress = match plan.network {
        Network::Proxied => Some(egress.ok_or(Error::NoEgress)?.clone()),
        Network::Denied => None,
    };
    let filters = if plan.seccomp {
        Some(crate::seccomp::filters()?)
    } else {
        None
    };
    let (report_read, report_write) = pipe_pair().map_err(|e| setup("creating a pipe", e))?;
    let handover = match plan.network {
        Network::Proxied => Some(socket_pair().map_err(|e| setup("creating a socket pair", e))?),
        Network::Denied => None,
    };
    let launch = Launch::new(
        plan,
        code,
        report_write.as_raw_fd(),
        handover.as_ref().map(|(_, child)| child.as_raw_fd()),
        filters,
    );
    let mut command = command(plan);
    // SAFETY: `Launch::enter` makes only async-signal-safe system calls on data prepared above
    // (see the launch module), as a hook between fork and exec must.
    unsafe {
        command.pre_exec(move || launch.enter());
    }

    let (ready_tx, ready_rx) = oneshot::channel();
    // Spawning and waiting share one thread: the launcher's parent-death signal fires when the
    // thread that forked it ends, so that thread must live as long as the run.
    let waiter = tokio::task::spawn_blocking(move || {
        let spawned = command.spawn();
        drop(report_write);
        let (parent_end, child_end) = handover.unzip();
        drop(child_end);
        let mut child = match spawned {
            Ok(child) => child,
            Err(e) => {
                let _ = ready_tx.send(Err(e));
                return;
            }
        };
        let started = (|| {
            let pidfd = pidfd_open(child.id())?;
            let listener = parent_end
                .map(|end| crate::sys::receive_fd(&end))
                .transpose()?;
            Ok(Started {
                pidfd,
                listener,
                stdout: child.stdout.take().map(OwnedFd::from),
                stderr: child.stderr.take().map(OwnedFd::from),
            })
        })();
        let failed = started.is_err();
        // A failed start, or a run whose future was dropped while it started, is killed here.
        if ready_tx.send(started).is_err() || failed {
            let _ = child.kill();
        }
        let _ = child.wait();
    });

    let mut report = pipe::Receiver::from_owned_fd(report_read)
        .map_err(|e| setup("watching the report pipe", e))?;
    let ready = ready_rx
        .await
        .map_err(|_| Error::Watch("the launcher thread ended early".into()))?;
    let started_run = match ready {
        Ok(started_run) => started_run,
        Err(e) => {
            let report = read_report(&mut report).await;
            let _ = waiter.await;
            return Err(failure(report.as_ref(), plan.interpreter(), e));
        }
    };
    let running = Running {
        proxy: match (started_run.listener, egress) {
            (Some(listener), Some(egress)) => Some(tokio::spawn(crate::proxy::serve(
                std::net::TcpListener::from(listener),
                egress,
            ))),
            _ => None,
        },
        pidfd: started_run.pidfd,
    };
    let cap = plan.limits.output_bytes;
    let flood = Arc::new(Notify::new());
    let stdout = capture(started_run.stdout, cap, flood.clone());
    let stderr = capture(started_run.stderr, cap, flood.clone());
    let all = async { tokio::join!(stdout, stderr, first_report(&mut report)) };
    tokio::pin!(all);
    let backstop = tokio::time::sleep(plan.limits.wall_clock + BACKSTOP);
    tokio::pin!(backstop);
    let (mut flooded, mut overdue) = (false, false);
    let (stdout, stderr, ended) = loop {
        tokio::select! {
            done = &mut all => break done,
            () = flood.notified(), if !flooded => {
                flooded = true;
                kill(&running.pidfd);
            }
            () = &mut backstop, if !overdue => {
                overdue = true;
                kill(&running.pidfd);
            }
        }
    };
    drop(running);
    // Not awaited: the blocking thread reaps the launcher while the kernel tears the
    // namespaces down; the outcome is complete once P1 has reported and the output has ended.
    drop(waiter);
    let duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);

    let (stdout, stdout_cut) = stdout;
    let (stderr, stderr_cut) = stderr;
    let mut outcome = Outcome {
        stdout,
        stderr,
        exit_code: None,
        signal: Some(signal_name(libc::SIGKILL)),
        duration_ms,
        peak_memory_bytes: None,
        truncated: stdout_cut || stderr_cut,
        limit: None,
    };
    match ended {
        Some(report) if report.kind == REPORT_ENDED => {
            let status = report.status;
            let (exit_code, signal) = if libc::WIFEXITED(status) {
                (Some(libc::WEXITSTATUS(status)), None)
            } else {
                (None, Some(libc::WTERMSIG(status)))
            };
            outcome.exit_code = exit_code;
            outcome.signal = signal.map(signal_name);
            outcome.peak_memory_bytes = u64::try_from(report.max_rss_kib)
                .ok()
                .filter(|kib| *kib > 0)
                .map(|kib| kib * 1024);
            let cpu_limit = i64::try_from(plan.limits.cpu_seconds)
                .unwrap_or(i64::MAX)
                .saturating_mul(1_000_000);
            outcome.limit = if report.timed_out == 1 {
                Some(Limit::WallClock)
            } else {
                limit_from(signal, &outcome.stderr, report.cpu_micros >= cpu_limit)
            };
        }
        Some(report) if report.kind == REPORT_FAILED => {
            return Err(failure(
                Some(&report),
                plan.interpreter(),
                io::Error::other("setup failed"),
            ));
        }
        _ => {
            // The launcher was killed before P1 could report: by the runner for flooding or
            // at the backstop, or from outside.
            outcome.limit = if flooded {
                Some(Limit::Output)
            } else {
                Some(Limit::WallClock)
            };
        }
    }
    if flooded {
        outcome.limit = Some(Limit::Output);
    }
    Ok(outcome)
}

/// A started sandbox. Dropped (the run is over, or its future was cancelled), it stops the
/// proxy and kills the launcher, which takes P1 and the namespace with it.
struct Running {
    proxy: Option<tokio::task::JoinHandle<()>>,
    pidfd: OwnedFd,
}

impl Drop for Running {
    fn drop(&mut self) {
        if let Some(proxy) = self.proxy.take() {
            proxy.abort();
        }
        kill(&self.pidfd);
    }
}

struct Started {
    pidfd: OwnedFd,
    listener: Option<OwnedFd>,
    stdout: Option<OwnedFd>,
    stderr: Option<OwnedFd>,
}

/// The interpreter's command line and its whole environment: nothing of Purko's environment
/// is passed on.
fn command(plan: &Plan) -> Command {
    let mut command = Command::new(plan.interpreter());
    match plan.language {
        Language::Python => command.args(["-I", &format!("{CODE_DIR}/main.py")]),
        Language::Bash => command.args(["--noprofile", "--norc", &format!("{CODE_DIR}/main.sh")]),
    };
    let home = plan
        .writable_paths
        .first()
        .map_or_else(|| "/".to_owned(), |p| p.display().to_string());
    command
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("LANG", "C.UTF-8")
        .env("HOME", &home)
        .env("TMPDIR", &home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if plan.network == Network::Proxied {
        let proxy = format!("http://127.0.0.1:{PROXY_PORT}");
        for name in ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"] {
            command.env(name, &proxy);
        }
    }
    command
}

/// Reads a stream, keeping the first `cap` bytes; past `cap + FLOOD_ALLOWANCE` it asks for the
/// run to be stopped and keeps draining until the stream ends.
async fn capture(stream: Option<OwnedFd>, cap: usize, flood: Arc<Notify>) -> (String, bool) {
    let Some(mut stream) = stream.and_then(|fd| pipe::Receiver::from_owned_fd(fd).ok()) else {
        return (String::new(), false);
    };
    let mut kept = Vec::new();
    let mut total = 0usize;
    let mut chunk = vec![0u8; 64 << 10];
    let mut asked = false;
    loop {
        let read = match stream.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        if kept.len() < cap {
            let take = read.min(cap - kept.len());
            kept.extend_from_slice(&chunk[..take]);
        }
        total = total.saturating_add(read);
        if !asked && total > cap.saturating_add(FLOOD_ALLOWANCE) {
            asked = true;
            flood.notify_one();
        }
    }
    let truncated = total > cap;
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if truncated {
        // A cut inside a UTF-8 sequence shows as one replacement character; drop it.
        if text.ends_with('\u{FFFD}') {
            text.pop();
        }
        text.push_str(&truncation_marker(cap));
    }
    (text, truncated)
}

/// Reads P1's report of how P2 ended (the first record once the interpreter runs), without
/// waiting for P1 to exit.
async fn first_report(report: &mut pipe::Receiver) -> Option<Report> {
    let mut bytes = [0u8; REPORT_SIZE];
    report.read_exact(&mut bytes).await.ok()?;
    Some(Report::from_bytes(&bytes))
}

/// Reads the report pipe to its end; the first failure wins, else the end of P2.
async fn read_report(report: &mut pipe::Receiver) -> Option<Report> {
    let mut bytes = Vec::new();
    let _ = report.read_to_end(&mut bytes).await;
    let reports: Vec<Report> = bytes
        .chunks_exact(REPORT_SIZE)
        .filter_map(|chunk| chunk.try_into().ok().map(Report::from_bytes))
        .collect();
    reports
        .iter()
        .find(|r| r.kind == REPORT_FAILED)
        .or_else(|| reports.iter().find(|r| r.kind == REPORT_ENDED))
        .copied()
}

fn failure(report: Option<&Report>, interpreter: &'static str, spawn: io::Error) -> Error {
    match report {
        Some(report) if report.kind == REPORT_FAILED => Error::Setup {
            step: STEPS
                .get(report.step as usize)
                .copied()
                .unwrap_or("an unknown step"),
            source: io::Error::from_raw_os_error(report.errno),
        },
        _ => Error::Spawn {
            interpreter,
            source: spawn,
        },
    }
}

fn setup(step: &'static str, source: io::Error) -> Error {
    Error::Setup { step, source }
}

#[allow(unsafe_code)]
fn pipe_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [-1, -1];
    // SAFETY: pipe2 writes two descriptors into a live array; each is owned once.
    unsafe {
        if libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

#[allow(unsafe_code)]
fn socket_pair() -> io::Result<(OwnedFd, OwnedFd)> {
    let mut fds: [RawFd; 2] = [-1, -1];
    // SAFETY: socketpair writes two descriptors into a live array; each is owned once.
    unsafe {
        if libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_STREAM | libc::SOCK_CLOEXEC,
            0,
            fds.as_mut_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
        Ok((OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])))
    }
}

#[allow(unsafe_code)]
fn pidfd_open(pid: u32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open returns a new descriptor, owned once.
    unsafe {
        let fd = libc::syscall(libc::SYS_pidfd_open, pid, 0u32);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(RawFd::try_from(fd).unwrap_or(-1)))
    }
}

#[allow(unsafe_code)]
fn kill(pidfd: &OwnedFd) {
    // SAFETY: signals the process the pidfd refers to (a no-op once it has ended).
    unsafe {
        libc::syscall(
            libc::SYS_pidfd_send_signal,
            pidfd.as_raw_fd(),
            libc::SIGKILL,
            std::ptr::null::<libc::siginfo_t>(),
            0u32,
        );
    }
}
