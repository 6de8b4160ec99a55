#![doc = include_str!("../README.md")]

mod code;
mod decision;
mod evaluation;
mod kind;
mod tool;

pub use code::Code;
pub use decision::{DecisionId, DecisionIdError};
pub use evaluation::{
    ArgumentError, AutonomyCell, Destination, DestinationVerdict, Evaluation, MatchedRule,
};
pub use kind::{
    Autonomy, Classification, Effect, Kind, KindSource, ParseWordError, Signal, SignalPlace,
};
pub use tool::{Marks, ToolAnnotations, ToolCall, ToolSpec};
