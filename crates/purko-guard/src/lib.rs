#![doc = include_str!("../README.md")]

mod allowlist;
mod catalogue;
mod classify;
mod destination;
mod draft;
mod error;
mod explain;
mod glob;
mod infer;
mod judge;
mod kinds_file;
mod lexicon;
mod policy;
mod validate;
mod words;

pub use allowlist::{AllowList, DestinationPattern};
pub use catalogue::{Catalogue, each_tool};
pub use classify::{Inference, classify};
pub use destination::{Because, DestinationMap, Found, destination_name};
pub use draft::{Draft, draft_tools_file};
pub use error::{Error, Location, Result};
pub use explain::explain;
pub use infer::{claim, describe, infer};
pub use judge::{Guard, GuardConfig, autonomy_cell, combine};
pub use kinds_file::{KindEntry, KindsFile};
pub use policy::{Policy, RawDestinations, RawPolicy, RawRule, Rule};
pub use validate::{Schema, argument_path};
