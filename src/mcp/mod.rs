//! `patchloop mcp`: the agent's sandboxed tools and the verifier as an MCP server over stdio
//! (official Rust SDK `rmcp`). One process serves one MCP session; its container is started
//! lazily on the first tool call from the image `patchloop prepare` builds (prepared here when
//! missing) and removed on disconnect, on SIGINT/SIGTERM and after the idle timeout. The
//! user's checkout is only read (to build the image and feed the verifier's policy).
//!
//! stdout carries only protocol messages: logs and prepare progress go to stderr.

mod session;
mod toolset;

pub use session::{McpArgs, serve};
pub use toolset::{tool_list, tool_names};
