//! What a run produced, as the engine and `purko exec` report it.

use serde::{Deserialize, Serialize};

/// The limit that ended a run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limit {
    WallClock,
    CpuTime,
    Memory,
    Processes,
    FileSize,
    OpenFiles,
    Output,
}

impl Limit {
    /// The limit in words, for an observation's message.
    pub fn describe(self) -> &'static str {
        match self {
            Limit::WallClock => "the wall-clock limit (maxExecutionSeconds)",
            Limit::CpuTime => "the CPU time limit",
            Limit::Memory => "the memory limit",
            Limit::Processes => "the process limit",
            Limit::FileSize => "the file size limit",
            Limit::OpenFiles => "the open files limit",
            Limit::Output => "the output limit (maxOutputBytes)",
        }
    }
}

/// One finished run.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Outcome {
    pub stdout: String,
    pub stderr: String,
    /// The interpreter's exit code, when it exited.
    pub exit_code: Option<i32>,
    /// The signal that ended the interpreter, e.g. `SIGKILL`.
    pub signal: Option<String>,
    pub duration_ms: u64,
    /// The largest resident set of the interpreter and its children, when known.
    pub peak_memory_bytes: Option<u64>,
    /// stdout or stderr was cut at the output limit (and ends with a marker saying so).
    pub truncated: bool,
    /// The limit that ended the run, if one did.
    pub limit: Option<Limit>,
}

/// The marker appended to a stream cut at the output limit.
pub(crate) fn truncation_marker(limit: usize) -> String {
    format!("\n[purko: output truncated at {limit} bytes]\n")
}

/// The name of a signal number, e.g. `SIGKILL`.
pub(crate) fn signal_name(signal: i32) -> String {
    let name = match signal {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        libc::SIGXCPU => "SIGXCPU",
        libc::SIGXFSZ => "SIGXFSZ",
        libc::SIGSYS => "SIGSYS",
        other => return format!("SIG{other}"),
    };
    name.to_owned()
}

/// What interpreters and shells print when a limit refuses them, and the limit.
const SAID: &[(&str, Limit)] = &[
    ("MemoryError", Limit::Memory),
    ("Cannot allocate memory", Limit::Memory),
    ("cannot allocate memory", Limit::Memory),
    (
        "fork: retry: Resource temporarily unavailable",
        Limit::Processes,
    ),
    ("fork: Resource temporarily unavailable", Limit::Processes),
    ("BlockingIOError: [Errno 11]", Limit::Processes),
    ("can't start new thread", Limit::Processes),
    ("File too large", Limit::FileSize),
    ("File size limit exceeded", Limit::FileSize),
    ("Too many open files", Limit::OpenFiles),
    ("CPU time limit exceeded", Limit::CpuTime),
];

/// Which limit a finished run hit, from how it ended and what it said. The kernel reports some
/// limits as signals (`SIGXCPU`, `SIGXFSZ`); the others surface as failed calls that the
/// interpreter prints (`MemoryError`, `EAGAIN` from fork, `EMFILE`), read here. A program that
/// caught the failure and said nothing is not caught by this reading.
pub(crate) fn limit_from(signal: Option<i32>, stderr: &str, cpu_exhausted: bool) -> Option<Limit> {
    match signal {
        Some(libc::SIGXCPU) => return Some(Limit::CpuTime),
        Some(libc::SIGXFSZ) => return Some(Limit::FileSize),
        Some(libc::SIGKILL) if cpu_exhausted => return Some(Limit::CpuTime),
        _ => {}
    }
    SAID.iter()
        .find(|(words, _)| stderr.contains(words))
        .map(|(_, limit)| *limit)
}
