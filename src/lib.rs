//! patchloop: a CI bot that repairs red builds inside a locked-down Docker sandbox.
//!
//! The crate is laid out by architecture (see ARCHITECTURE.md):
//! `sandbox` (containers, images, exec), `agent` (the loop, tools, model adapters),
//! `verify` (the verdict), `github` (events and posting), `config`, `mcp`, `bench`, `eval`.
//! `pipeline` assembles prepare → reproduce → episode → verify once for every entry point;
//! `cli` is the thin command-line front end; `clock`, `testcmd` and `testid` are leaf values every layer
//! may use.

pub mod agent;
pub mod bench;
pub mod cli;
pub mod clock;
pub mod config;
pub mod eval;
pub mod github;
pub mod mcp;
pub mod pipeline;
pub mod sandbox;
pub mod testcmd;
pub mod testid;
pub mod verify;

#[cfg(test)]
mod tidy;
