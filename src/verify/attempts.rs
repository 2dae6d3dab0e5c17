//! What the receipt records of the repair search that found the patch: each attempt (a
//! strategy on a model tier) with its result and spend, and the ledger's totals. Filled by
//! the pipeline; empty when the verifier ran alone (`patchloop verify`).

use serde::{Deserialize, Serialize};

pub use super::outcome::Outcome;
use crate::config::repair::Strategy;

/// One strategy on one model tier: what it cost and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepairAttempt {
    /// 0 = the first model; escalation goes up.
    pub tier: usize,
    pub model: String,
    pub strategy: Strategy,
    pub result: Outcome,
    pub tokens: u64,
    pub cost_usd: f64,
    /// Time waiting for the model server.
    pub model_ms: u64,
    /// The attempt's whole wall time (model, tools, test runs; not verification).
    pub wall_ms: u64,
    /// Candidates drawn / that passed the target tests (0 for the loop).
    #[serde(default)]
    pub candidates: usize,
    #[serde(default)]
    pub passing: usize,
    /// Why this tier ran this strategy when none were configured (routing by model size and
    /// tier), e.g. `a small model (1.5B): the anytime search`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
    /// The share of the wall time it was given (none: the rest of the budget).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub share_ms: Option<u64>,
    /// Why it ended (`submitted`, `no_candidate`, `stage_share`, `time_limit`, …).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub stop: String,
}

/// A stage the search did not run on a tier, and why.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SkippedStage {
    pub tier: usize,
    pub strategy: Strategy,
    pub why: String,
}

/// How the search went as a whole: the stages it skipped and why it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SearchRecord {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<SkippedStage>,
    /// `verified`, `budget spent (time_limit)`, or every stage having run or declined.
    pub ended: String,
}

/// The ledger's figures for the receipt and the job summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SpendReport {
    pub steps: usize,
    /// Model calls answered (every one booked by the ledger: steps, compaction, fills, chat
    /// samples, the verifier's review).
    #[serde(default)]
    pub calls: usize,
    pub tokens: u64,
    pub cost_usd: f64,
    pub model_ms: u64,
    pub wall_ms: u64,
    /// Tokens, dollars and model time of each model tier (0 = the first model).
    #[serde(default)]
    pub tiers: Vec<TierSpend>,
    /// The caps it was held to (0 dollars = no cap).
    pub max_seconds: f64,
    pub max_tokens: u64,
    pub max_cost_usd: f64,
    /// Which cap stopped the search, if one did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_by: Option<Cap>,
}

/// A cap of the repair's budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Cap {
    Time,
    Tokens,
    Cost,
}

impl Cap {
    pub fn as_str(&self) -> &'static str {
        match self {
            Cap::Time => "time",
            Cap::Tokens => "tokens",
            Cap::Cost => "cost",
        }
    }
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TierSpend {
    pub tier: usize,
    pub steps: usize,
    pub tokens: u64,
    pub cost_usd: f64,
    pub model_ms: u64,
}
