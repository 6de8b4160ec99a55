#![doc = include_str!("../README.md")]

mod check;
mod error;
mod finding;
mod go;
mod pynames;
mod python;
mod secrets;
mod source;
mod tree;

pub use check::{CheckList, CodeLanguage, Entry, Hit, Verdict, check};
pub use error::{Error, Result};
pub use finding::{Confidence, Finding, Kind, Severity};
pub use source::{MAX_SOURCE_BYTES, SourceLanguage, analyze};
