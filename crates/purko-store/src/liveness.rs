//! Whether the run that holds a claim is still alive. A run is dead when its heartbeat is older
//! than [`HEARTBEAT_TIMEOUT_MS`], or when it ran on this host and its process is gone (no
//! `/proc/<pid>`, or a pid reused by a process that started at another time). Where `/proc`
//! cannot tell, only the heartbeat decides.

use crate::ProcessIdentity;

/// A run whose last heartbeat is older than this is dead.
pub const HEARTBEAT_TIMEOUT_MS: i64 = 30_000;

/// What the store knows about a run.
#[derive(Clone, Debug)]
pub(crate) struct RunRow {
    pub process: ProcessIdentity,
    pub heartbeat_ms: i64,
}

/// This process, as seen from `/proc`.
pub(crate) fn this_process() -> ProcessIdentity {
    let pid = std::process::id();
    ProcessIdentity {
        pid,
        host: this_host(),
        start_ticks: start_ticks(pid),
    }
}

/// The host name, read without spawning anything.
pub(crate) fn this_host() -> String {
    ["/proc/sys/kernel/hostname", "/etc/hostname"]
        .iter()
        .find_map(|p| {
            let name = std::fs::read_to_string(p).ok()?;
            let name = name.trim();
            (!name.is_empty()).then(|| name.to_owned())
        })
        .unwrap_or_default()
}

/// Field 22 of `/proc/<pid>/stat`: when the process started, in clock ticks since boot.
pub(crate) fn start_ticks(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Field 2 is the command in parentheses and may hold spaces or parentheses itself.
    let after_command = &stat[stat.rfind(')')? + 1..];
    // After the command come fields 3, 4, ...: field 22 is the 20th of them.
    after_command.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the run is dead at `now_ms`, seen from a process on `host`.
pub(crate) fn is_dead(run: &RunRow, host: &str, now_ms: i64) -> bool {
    if now_ms.saturating_sub(run.heartbeat_ms) > HEARTBEAT_TIMEOUT_MS {
        return true;
    }
    if run.process.host.is_empty() || run.process.host != host || !proc_available() {
        return false;
    }
    match start_ticks(run.process.pid) {
        None => true,
        Some(ticks) => run.process.start_ticks.is_some_and(|t| t != ticks),
    }
}

fn proc_available() -> bool {
    std::path::Path::new("/proc/self/stat").exists()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(process: ProcessIdentity, heartbeat_ms: i64) -> RunRow {
        RunRow {
            process,
            heartbeat_ms,
        }
    }

    #[test]
    fn this_process_is_alive() {
        let me = this_process();
        assert!(me.start_ticks.is_some(), "/proc is there on the test hosts");
        assert!(!is_dead(&run(me.clone(), 1_000), &me.host, 2_000));
    }

    #[test]
    fn an_old_heartbeat_is_dead_even_for_a_live_process() {
        let me = this_process();
        assert!(is_dead(&run(me.clone(), 0), &me.host, 30_001));
    }

    #[test]
    fn a_missing_or_reused_pid_on_this_host_is_dead() {
        let me = this_process();
        let gone = ProcessIdentity {
            pid: u32::MAX - 1,
            ..me.clone()
        };
        assert!(is_dead(&run(gone, 1_000), &me.host, 1_000));
        let reused = ProcessIdentity {
            start_ticks: me.start_ticks.map(|t| t + 1),
            ..me.clone()
        };
        assert!(is_dead(&run(reused, 1_000), &me.host, 1_000));
    }

    #[test]
    fn another_host_is_judged_by_its_heartbeat_only() {
        let other = ProcessIdentity {
            pid: u32::MAX - 1,
            host: "elsewhere.example".into(),
            start_ticks: None,
        };
        assert!(!is_dead(&run(other, 1_000), &this_host(), 1_000));
    }

    #[test]
    fn a_command_with_parentheses_does_not_confuse_the_stat_parser() {
        // The parser must count fields after the last ')'; check it on this process.
        assert_eq!(start_ticks(std::process::id()), this_process().start_ticks);
    }
}
