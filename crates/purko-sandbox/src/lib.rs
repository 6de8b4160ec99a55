#![doc = include_str!("../README.md")]

mod error;
mod host;
mod landlock;
mod launch;
mod observe;
mod outcome;
mod plan;
mod proxy;
mod run;
mod seccomp;
mod sys;

pub use error::{Error, PlanError, Result};
pub use host::{Host, Probe};
pub use outcome::{Limit, Outcome};
pub use plan::{Layer, Limits, Network, Plan, Weaker};
pub use run::run;
