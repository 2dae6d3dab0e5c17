//! The verification gate: a verdict that comes only from a fresh container, judged against a
//! patch policy, hardened pytest runs and re-runs, with a receipt users can read.
//!
//! Pure parts: [`diff`] (patch parsing), [`policy`] (which changes are allowed), [`junit`]
//! (per-test outcomes), [`verdict`] (the decision) and [`receipt`] (JSON + Markdown).

pub mod diff;
pub mod glob;
pub mod harness;
pub mod junit;
pub mod policy;
pub mod receipt;
pub mod runner;
pub mod verdict;

pub use runner::{Holdout, PreparedImage, VerifyRequest, verify};
pub mod cli;
