//! The integration tests of purko-guard, as one binary.

mod corpus;
