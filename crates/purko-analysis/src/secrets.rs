//! Secrets.
