//! The analysis crate from outside: the pre-execution check, the analyzer's rule families,
//! bad input, and the corpus (must-catch recall, clean files).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    reason = "a broken fixture should fail the test loudly"
)]

mod analyze;
mod check_bash;
mod check_python;
mod corpus;
mod never_panics;
