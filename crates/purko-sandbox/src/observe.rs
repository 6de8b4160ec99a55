//! A run as the observation a model gets (DESIGN.md section 5): what the program printed, how it
//! ended, and for a limit the code (`SANDBOX_TIMEOUT` for the wall clock, `SANDBOX_LIMIT`
//! otherwise, naming the limit) with a remediation a model can follow.

use purko_protocol::{Code, Observation};
use serde_json::json;

use crate::outcome::{Limit, Outcome};
use crate::plan::Plan;

impl Outcome {
    /// The observation of this run, which `plan` ran.
    pub fn observation(&self, plan: &Plan) -> Observation {
        let body = json!({
            "stdout": self.stdout,
            "stderr": self.stderr,
            "exit_code": self.exit_code,
            "signal": self.signal,
            "duration_ms": self.duration_ms,
            "peak_memory_bytes": self.peak_memory_bytes,
            "truncated": self.truncated,
        });
        let mut observation = match self.limit {
            Some(Limit::WallClock) => Observation::error(
                Code::SandboxTimeout,
                self.summary(plan),
                "make the code finish sooner: do less per call, or split the work into steps",
            ),
            Some(limit) => {
                Observation::error(Code::SandboxLimit, self.summary(plan), remediation(limit))
            }
            None => {
                let mut done = Observation::success(serde_json::Value::Null);
                done.message = Some(self.summary(plan));
                done
            }
        }
        .with_observation(body);
        observation.truncated = self.truncated;
        observation
    }

    /// One sentence on how the run ended.
    pub fn summary(&self, plan: &Plan) -> String {
        match (self.limit, &self.exit_code, &self.signal) {
            (Some(Limit::WallClock), _, _) => format!(
                "The code ran longer than the {} s limit and was stopped.",
                plan.limits.wall_clock.as_secs()
            ),
            (Some(limit), _, _) => format!("The code hit {} and was stopped.", limit.describe()),
            (None, Some(code), _) => format!("The code ran and exited with status {code}."),
            (None, None, Some(signal)) => format!("The code was ended by {signal}."),
            (None, None, None) => "The code ended.".to_owned(),
        }
    }
}

fn remediation(limit: Limit) -> &'static str {
    match limit {
        Limit::WallClock => "make the code finish sooner",
        Limit::CpuTime => "use less CPU time: a cheaper algorithm, or less data per call",
        Limit::Memory => "use less memory: stream the data, or work on smaller pieces",
        Limit::Processes => "start fewer processes or threads",
        Limit::FileSize => "write smaller files",
        Limit::OpenFiles => "close files when done with them",
        Limit::Output => "print less: summarize the data instead of printing it whole",
    }
}
