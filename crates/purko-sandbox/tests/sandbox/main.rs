//! The sandbox's tests: planning errors, and real runs of python3 and bash, among them a hostile
//! battery that must stay contained.

mod support;

mod basics;
mod hostile;
mod network;
mod plan;
