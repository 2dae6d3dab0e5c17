//! The one budget of a repair: every limit the agent loop and compaction obey, with the one
//! set of defaults. Filled in one precedence (lowest first): these defaults, the organisation's
//! `patchloop.yml`, the repository's `.github/patchloop.yml`, a `--config` file, action inputs,
//! command-line flags ([`Config::apply`](super::Config::apply) layers; `config show` names the
//! source of each value).

use std::time::Duration;

use serde::Serialize;

/// Every limit of an episode, checked before each model call.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Budgets {
    /// Model turns.
    pub max_steps: usize,
    /// Wall-clock time of the episode (model calls and tool calls).
    #[serde(serialize_with = "as_secs")]
    pub max_wall: Duration,
    /// Prompt + completion tokens over the whole episode.
    pub max_tokens: u64,
    /// Dollars; models not in the price table cost $0 and still count tokens. 0 = no cap.
    pub max_cost_usd: f64,
    /// Consecutive replies without a usable tool call.
    pub max_format_errors: usize,
    /// The model's context window in tokens; compaction starts at three quarters of it.
    pub context_tokens: usize,
}

/// The defaults, in one place (README and docs/github.md quote them).
pub const DEFAULT_MAX_STEPS: usize = 30;
pub const DEFAULT_MAX_SECONDS: u64 = 30 * 60;
pub const DEFAULT_MAX_TOKENS: u64 = 1_000_000;
pub const DEFAULT_MAX_COST_USD: f64 = 1.0;
pub const DEFAULT_CONTEXT_TOKENS: usize = 8192;

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            max_steps: DEFAULT_MAX_STEPS,
            max_wall: Duration::from_secs(DEFAULT_MAX_SECONDS),
            max_tokens: DEFAULT_MAX_TOKENS,
            max_cost_usd: DEFAULT_MAX_COST_USD,
            max_format_errors: 3,
            context_tokens: DEFAULT_CONTEXT_TOKENS,
        }
    }
}

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// The budget flags shared by `fix` and `eval` (each unset flag leaves the configured value).
#[derive(Debug, Clone, Default, clap::Args)]
pub struct BudgetArgs {
    /// Maximum model turns [default: 30, or the repository's config].
    #[arg(long)]
    pub max_steps: Option<u64>,
    /// Dollars; models not in the price table cost $0 [default: 1.0, or the config].
    #[arg(long)]
    pub max_cost: Option<f64>,
    /// Prompt + completion tokens [default: 1000000, or the config].
    #[arg(long)]
    pub max_tokens: Option<u64>,
    /// Wall-clock budget of an episode, seconds [default: 1800, or the config].
    #[arg(long)]
    pub max_seconds: Option<u64>,
}

impl BudgetArgs {
    /// The flags (and the model's `--context-tokens`) as the top config layer; `None` when no
    /// flag was given.
    pub fn layer(&self, context_tokens: Option<u64>) -> Option<super::ConfigFile> {
        let f = super::BudgetsFile {
            max_steps: self.max_steps,
            max_cost_usd: self.max_cost,
            max_tokens: self.max_tokens,
            max_seconds: self.max_seconds,
            context_tokens,
        };
        (f != super::BudgetsFile::default()).then(|| super::ConfigFile {
            budgets: Some(f),
            ..super::ConfigFile::default()
        })
    }
}
