#![doc = include_str!("../README.md")]

mod approval;
mod code;
mod decision;
mod evaluation;
mod http;
mod kind;
mod observation;
mod tool;

pub use approval::{Approval, ApprovalId, ApprovalIdError, ApprovalScope, ApprovalStatus};
pub use code::Code;
pub use decision::{DecisionId, DecisionIdError};
pub use evaluation::{
    ArgumentError, AutonomyCell, Destination, DestinationVerdict, Evaluation, MatchedRule,
};
pub use http::{AuthScheme, HttpMethod};
pub use kind::{
    Autonomy, Classification, Effect, Kind, KindSource, ParseWordError, Signal, SignalPlace,
};
pub use observation::{Observation, Status};
pub use tool::{Marks, ToolAnnotations, ToolCall, ToolSpec};
