//! GitHub side of patchloop: events, the comment command, log extraction, posting and the
//! `patchloop action` entry point.
//!
//! Pure parts (`event`, `command`, `logs`, `diff`, `render`) do no I/O. The I/O parts
//! (`client`, `post`, `action`) reach the repair pipeline only through the [`Repairer`]
//! trait, so the GitHub token never travels into it.

pub mod action;
pub mod api;
pub mod client;
pub mod command;
pub mod diff;
pub mod event;
pub mod logs;
pub mod post;
pub mod render;

use std::path::PathBuf;

/// The pipeline's outputs directory inside the checkout (`.patchloop/<sha>/`): the action
/// reports paths under it and hands it to the workspace's owner after the repair. Must name
/// the directory the pipeline writes (`OUT_DIR` of the repair pipeline).
pub const OUT_DIR: &str = ".patchloop";

/// What the GitHub side asks the repair pipeline to do. Carries no credentials.
#[derive(Debug, Clone, PartialEq)]
pub struct RepairRequest {
    /// Checkout of the failing commit (inside the action: `/github/workspace`).
    pub repo_dir: PathBuf,
    /// The test command to reproduce the failure.
    pub test_cmd: Option<String>,
    /// Failing test ids from the CI logs (may be empty).
    pub failing_tests: Vec<String>,
    /// The failing commit.
    pub head_sha: String,
    pub pr: Option<u64>,
    /// `owner/name`.
    pub repository: String,
    pub model: Option<String>,
    pub max_steps: Option<u64>,
    pub max_cost_usd: Option<f64>,
    pub max_tokens: Option<u64>,
    pub reruns: Option<u32>,
    /// Workspace paths under `.github/` the patch may touch (CI-config fixes; default none).
    pub allowed_ci_paths: Vec<String>,
    /// Model endpoint from the action inputs (`ollama-url` or `base-url`).
    pub ollama_url: Option<String>,
    pub base_url: Option<String>,
    /// Model API key (`api-key`): for the model client only, never the sandbox.
    pub api_key: Option<ApiKey>,
}

/// A model API key whose `Debug` does not print it.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(pub String);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(***)")
    }
}

/// What the pipeline returns.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RepairOutcome {
    /// Named verdict, e.g. `verified`, `not_verified`, `no_patch`, `budget_exhausted`.
    pub verdict: String,
    /// True only when a fresh container verified the patch.
    pub verified: bool,
    /// Unified diff against `head_sha` (empty when there is none).
    pub patch: String,
    /// Receipt rendered as Markdown (harness-written, but still sanitised before posting).
    pub receipt_md: String,
    pub receipt_json_path: Option<PathBuf>,
    pub patch_path: Option<PathBuf>,
    /// Model-written explanation (sanitised before posting).
    pub explanation: String,
    /// Harness-written one line on why the run ended so, e.g. `not fixed: 2 tests still
    /// failing (stop reason …)`: what an unverified outcome without a receipt says instead.
    /// May name the model's endpoint, which posts and the summary strip.
    pub reason: String,
    /// Which model produced the patch (e.g. `ollama:qwen2.5-coder:7b`, or `scripted:FILE (a
    /// scripted test double …)`), without its endpoint: every report names it.
    pub model: String,
    pub cost_usd: f64,
    pub tokens: u64,
    pub seconds: f64,
}

/// The repair pipeline (sandbox + agent + verifier), plugged in by the caller.
#[async_trait::async_trait]
pub trait Repairer: Send + Sync {
    async fn repair(&self, req: RepairRequest) -> anyhow::Result<RepairOutcome>;
}
