//! What the receipt records of the repair search that found the patch: each attempt (a
//! strategy on a model tier) with its result and spend, and the ledger's totals. Filled by
//! the pipeline; empty when the verifier ran alone (`patchloop verify`).

use serde::{Deserialize, Serialize};

use super::verdict::Verdict;
use crate::config::repair::Strategy;

/// One strategy on one model tier: what it cost and how it ended.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RepairAttempt {
    /// 0 = the first model; escalation goes up.
    pub tier: usize,
    pub model: String,
    pub strategy: Strategy,
    pub result: AttemptResult,
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
    /// tier), e.g. `a small model (1.5B): the candidates alone`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub why: String,
}

/// The ledger's figures for the receipt and the job summary.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SpendReport {
    pub steps: usize,
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

/// How one attempt ended, as the receipt, the eval results and the job summary record it.
/// Serialised as one snake_case word (a verifier verdict by its own name).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AttemptResult {
    /// A fresh container verified one of its patches.
    Verified,
    /// The verifier judged its (last) patch and said no.
    Rejected(Verdict),
    /// It proposed nothing (the loop's workspace is unchanged).
    #[default]
    NoPatch,
    /// Candidates were drawn and none passed in the sandbox.
    NotPassing,
    /// The fault localization and the context located no code to edit.
    NoSuspect,
    /// The loop's patch fails the tests in its own container.
    Failing,
    /// The patch passes in the sandbox and no verification was asked (`reruns: 0`).
    Passing,
    /// A patch was proposed but not verified (results written before the verifier judged
    /// every attempt read so).
    NotVerified,
    /// The budget was spent before it could start.
    Budget,
    Error,
}

impl AttemptResult {
    pub fn as_str(&self) -> &'static str {
        match self {
            AttemptResult::Verified => "verified",
            AttemptResult::Rejected(v) => v.as_str(),
            AttemptResult::NoPatch => "no_patch",
            AttemptResult::NotPassing => "not_passing",
            AttemptResult::NoSuspect => "no_suspect",
            AttemptResult::Failing => "failing",
            AttemptResult::Passing => "passing",
            AttemptResult::NotVerified => "not_verified",
            AttemptResult::Budget => "budget",
            AttemptResult::Error => "error",
        }
    }

    pub fn parse(s: &str) -> Option<AttemptResult> {
        const OWN: [AttemptResult; 9] = [
            AttemptResult::Verified,
            AttemptResult::NoPatch,
            AttemptResult::NotPassing,
            AttemptResult::NoSuspect,
            AttemptResult::Failing,
            AttemptResult::Passing,
            AttemptResult::NotVerified,
            AttemptResult::Budget,
            AttemptResult::Error,
        ];
        OWN.into_iter().find(|r| r.as_str() == s).or_else(|| {
            Verdict::ALL
                .into_iter()
                .find(|v| v.as_str() == s)
                .map(AttemptResult::Rejected)
        })
    }

    /// The attempt's result from the verifier's verdict on its patch.
    pub fn of_verdict(v: Verdict) -> AttemptResult {
        match v {
            Verdict::Verified => AttemptResult::Verified,
            // One word, one meaning: the verifier's `error` is the attempt's.
            Verdict::Error => AttemptResult::Error,
            v => AttemptResult::Rejected(v),
        }
    }
}

impl std::fmt::Display for AttemptResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for AttemptResult {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for AttemptResult {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        AttemptResult::parse(&s)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown attempt result `{s}`")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempt_results_round_trip_as_one_word() {
        for s in [
            "verified",
            "still_failing",
            "needs_review",
            "no_patch",
            "not_passing",
            "no_suspect",
            "failing",
            "passing",
            "not_verified",
            "budget",
            "error",
        ] {
            let r = AttemptResult::parse(s).unwrap();
            assert_eq!(r.as_str(), s);
            let j = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<AttemptResult>(&j).unwrap(), r);
        }
        assert!(serde_json::from_str::<AttemptResult>("\"maybe\"").is_err());
        assert_eq!(
            AttemptResult::of_verdict(Verdict::NeedsReview),
            AttemptResult::Rejected(Verdict::NeedsReview)
        );
    }
}
