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

pub use crate::verify::outcome::Outcome;

/// The pipeline's outputs directory inside the checkout (`.patchloop/<sha>/`): the action
/// reports paths under it and hands it to the workspace's owner after the repair. Must name
/// the directory the pipeline writes (`OUT_DIR` of the repair pipeline).
pub const OUT_DIR: &str = ".patchloop";

/// What the GitHub side asks the repair pipeline to do. Carries no credentials.
#[derive(Debug, Clone, PartialEq)]
pub struct RepairRequest {
    /// Checkout of the failing commit (inside the action: `/github/workspace`).
    pub repo_dir: PathBuf,
    /// The test command: the repository's config's, else the one the CI log shows.
    pub test_cmd: Option<crate::testcmd::TestCommand>,
    /// Failing test ids from the CI logs (may be empty).
    pub failing_tests: Vec<String>,
    /// The failing commit.
    pub head_sha: String,
    pub pr: Option<u64>,
    /// `owner/name`.
    pub repository: String,
    /// The model as the comment command named it (`/patchloop fix --model …`), over the
    /// config's `model`.
    pub model: Option<String>,
    /// The merged configuration (org file < the base's `.github/patchloop.yml` < inputs): the
    /// pipeline turns it into its one validated plan (`pipeline::plan::build`).
    pub config: crate::config::Config,
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
    /// The outcome on the one ladder: the verifier's verdict (only a fresh container says
    /// `verified`), else the pipeline's own (`not_verified`, `no_patch`, `nothing_failing`).
    /// The `verdict` output is its [`Outcome::action_word`].
    pub verdict: Outcome,
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
    /// Each strategy × model tier tried, with its spend (the job summary's table).
    pub attempts: Vec<crate::verify::receipt::RepairAttempt>,
    /// The search's ledger: totals and per model tier against the caps (the job summary).
    pub spend: Option<crate::verify::attempts::SpendReport>,
}

impl RepairOutcome {
    /// Only a fresh container's verdict makes an outcome verified.
    pub fn verified(&self) -> bool {
        self.verdict.verified()
    }
}

/// The repair pipeline (sandbox + agent + verifier), plugged in by the caller.
#[async_trait::async_trait]
pub trait Repairer: Send + Sync {
    async fn repair(&self, req: RepairRequest) -> anyhow::Result<RepairOutcome>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_yml_documents_exactly_the_verdicts_the_code_emits() {
        let yml = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/action.yml"))
            .expect("action.yml");
        let doc: serde_yaml::Value = serde_yaml::from_str(&yml).expect("action.yml is YAML");
        let desc = doc["outputs"]["verdict"]["description"]
            .as_str()
            .expect("outputs.verdict.description");
        let documented: std::collections::BTreeSet<&str> =
            desc.split('`').skip(1).step_by(2).collect();
        let code: std::collections::BTreeSet<&str> = Outcome::action_words().into_iter().collect();
        assert_eq!(
            documented, code,
            "action.yml's verdict list vs Outcome::action_words"
        );
        for v in crate::verify::verdict::Verdict::ALL.map(|v| v.as_str()) {
            assert!(code.contains(v), "verifier verdict `{v}`");
        }
        // The pipeline's own names (verify/outcome.rs), and the action's.
        for v in [
            "not_verified",
            "no_patch",
            "nothing_failing",
            "ignored",
            "error",
        ] {
            assert!(code.contains(v), "`{v}`");
        }
    }
}
