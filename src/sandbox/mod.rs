//! The sandbox engine: hardened containers over the Docker Engine API.
//!
//! Everything model-written runs here. The container policy is a value ([`policy::ContainerPolicy`])
//! turned into a Docker create request by exactly one function; every container carries labels
//! (run id, deadline) so a reaper can remove what a dead harness left behind.

pub mod builder;
pub mod ci;
pub mod ci_deps;
pub mod ci_resolve;
mod ci_text;
pub mod cipython;
pub mod container;
pub mod context;
pub mod docker;
pub mod doctor;
pub mod envfail;
pub mod image;
pub mod image_cli;
pub mod lang;
pub mod layer;
pub mod output;
pub mod plugins;
pub mod policy;
pub mod prepare;
pub mod probe;
pub mod prune;
pub mod pydeps;
pub mod pytest;
pub mod reaper;
pub mod seccomp;
pub mod steploop;

use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use docker::connect_and_reap;
pub use output::CappedOutput;

/// Label keys every patchloop container carries.
pub const LABEL_RUN: &str = "patchloop.run";
pub const LABEL_DEADLINE: &str = "patchloop.deadline";
pub const LABEL_ROLE: &str = "patchloop.role";

/// Where the repository lives inside every sandbox image and container.
pub const WORKSPACE: &str = "/workspace";

/// One command to run inside a sandbox container.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    /// argv; never passed through a host shell.
    pub argv: Vec<String>,
    /// Bytes written to the process's stdin, then closed. `None` means stdin is /dev/null.
    pub stdin: Option<Vec<u8>>,
    /// Wall-clock limit; at expiry every process of the step is killed.
    pub timeout: Duration,
    /// Bytes of combined stdout+stderr kept (half head, half tail).
    pub output_cap: usize,
    /// Working directory inside the container (default: the workspace).
    pub workdir: Option<String>,
    /// Extra environment, `KEY=VALUE`; only harness-chosen values, never host env.
    pub env: Vec<String>,
}

impl ExecRequest {
    /// `bash -c SCRIPT` with default limits (60 s, 64 KiB).
    pub fn shell(script: impl Into<String>) -> Self {
        Self::argv(["bash", "-c", &script.into()])
    }

    pub fn argv<I, S>(argv: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        ExecRequest {
            argv: argv.into_iter().map(|s| s.as_ref().to_string()).collect(),
            stdin: None,
            timeout: Duration::from_secs(60),
            output_cap: 64 * 1024,
            workdir: None,
            env: Vec::new(),
        }
    }

    pub fn timeout(mut self, t: Duration) -> Self {
        self.timeout = t;
        self
    }

    pub fn output_cap(mut self, bytes: usize) -> Self {
        self.output_cap = bytes;
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn workdir(mut self, dir: impl Into<String>) -> Self {
        self.workdir = Some(dir.into());
        self
    }

    pub fn env(mut self, kv: impl Into<String>) -> Self {
        self.env.push(kv.into());
        self
    }
}

/// How a command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "code")]
pub enum ExecStatus {
    /// The process exited on its own with this code.
    Exited(i64),
    /// The harness killed it at the step timeout.
    TimedOut,
    /// Killed by the kernel's OOM killer (exit 137 plus the cgroup oom_kill counter).
    Oom,
    /// The step filled the workspace's quota (its tmpfs is full: blocks or inodes).
    QuotaExceeded,
}

impl ExecStatus {
    pub fn success(&self) -> bool {
        matches!(self, ExecStatus::Exited(0))
    }
}

/// The result of one [`ExecRequest`].
#[derive(Debug, Clone)]
pub struct ExecResult {
    pub status: ExecStatus,
    /// Combined stdout and stderr, capped.
    pub output: CappedOutput,
    pub duration: Duration,
}

/// Failures of the sandbox itself (not of the command inside it).
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error(
        "no Docker daemon answers on {socket}: {reason}\n  start one with `sudo systemctl start docker` (or `scripts/ensure-docker` on Debian as root), or point DOCKER_HOST at a running daemon"
    )]
    NoDaemon { socket: String, reason: String },
    #[error("Docker API error while {action}: {source}")]
    Docker {
        action: String,
        #[source]
        source: bollard::errors::Error,
    },
    #[error("the container {id} is gone ({reason})")]
    ContainerGone { id: String, reason: String },
    #[error("{0}")]
    Other(String),
}

impl SandboxError {
    pub fn docker(
        action: impl Into<String>,
    ) -> impl FnOnce(bollard::errors::Error) -> SandboxError {
        let action = action.into();
        move |source| SandboxError::Docker { action, source }
    }
}

/// A running sandbox a caller can execute commands in. The agent's tools, the verifier and the
/// MCP server all talk to containers through this trait, so their logic is testable without Docker.
#[async_trait]
pub trait Sandbox: Send + Sync {
    /// Run one command; after it returns, no process it started is still alive.
    async fn exec(&self, req: ExecRequest) -> Result<ExecResult, SandboxError>;
    /// The workspace's changes against the image's baseline commit, as a unified git diff,
    /// taken with harness-owned git settings (the workspace's own `.git` is never trusted).
    async fn diff(&self) -> Result<String, SandboxError>;
    /// A short id for logs and trajectories.
    fn id(&self) -> &str;
    /// A step filled the workspace quota: the sandbox's state is no longer usable.
    fn workspace_full(&self) -> bool {
        false
    }
    /// One request/response line with a long-lived read-only helper process running `argv`
    /// as [`HELPER_USER`] (started on the first call). Another uid than the sandbox user's,
    /// so no step can signal it, trace it or write to its output: its answers are as
    /// trustworthy as a fresh exec's, without an exec's cost. `None`: no helper here (the
    /// caller uses exec), or it failed before (it is not restarted).
    async fn helper_call(
        &self,
        _argv: &[String],
        _request: &str,
        _timeout: Duration,
    ) -> Option<Result<String, SandboxError>> {
        None
    }
}

/// The uid:gid of [`Sandbox::helper_call`]'s helper: nobody, not the sandbox user. It reads
/// what is world-readable (prepare makes the workspace so) and writes nothing.
pub const HELPER_USER: &str = "65534:65534";
