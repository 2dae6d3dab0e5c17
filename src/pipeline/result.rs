//! What a repair returns: the outcome on the one ladder (`verify::outcome`), the patch, the
//! targets it was held to, the receipt, each attempt with its spend, and one line for people.

use std::time::Duration;

use super::targets::Targets;
use crate::agent::attempt::{Spend, StopReason};
use crate::agent::tools::TestRun;
use crate::config::repair::Strategy;
use crate::verify::outcome::Outcome;
use crate::verify::receipt::{Receipt, RepairAttempt};

/// The result of a repair (`pipeline::run`).
#[derive(Debug, Clone)]
pub struct RepairResult {
    /// How it ended: `verified` (or `passing` when no verification was asked) for the patch
    /// the search took, `nothing_failing`, else the last attempt's outcome.
    pub outcome: Outcome,
    /// The verified patch, else the last one proposed (empty when none was).
    pub patch: String,
    /// The test run in the episode container after the loop's episode (`Reproduce` targets).
    pub after: Option<TestRun>,
    /// The model that produced the verified patch, else every tier (`a → b`).
    pub model: String,
    /// The targets it was held to (resolved after the baseline run).
    pub targets: Targets,
    /// The verifier's receipt, when a patch was verified (the last judged one otherwise).
    pub receipt: Option<Receipt>,
    /// Each strategy × model tier tried, in order, with its spend.
    pub attempts: Vec<RepairAttempt>,
    /// The strategy that produced the verified patch.
    pub strategy: Option<Strategy>,
    /// How the search ended: the verified attempt's stop reason, else the last attempt's, else
    /// the cap that left no room for one (`None`: nothing was failing, no attempt ran).
    pub stop: Option<StopReason>,
    pub detail: String,
    /// The stages skipped and why the search ended (also in the receipt, when there is one).
    pub search: crate::verify::attempts::SearchRecord,
    /// Everything the search spent (the ledger's totals), and loop steps.
    pub spent: Spend,
    /// The search's own wall time (reproduction, attempts, verification).
    pub wall: Duration,
    /// Container start to the search's end, verification excluded.
    pub episode_wall: Duration,
    pub verify_wall: Duration,
    /// What the search started from (for the field funnel): targets the baseline reproduced
    /// and the fault localization's best functions.
    pub start: StartReport,
}

/// What the search started from: how many targets the baseline run reproduced, and how the
/// fault localization ranked the code.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StartReport {
    /// The targets (fail-to-pass tests).
    pub targets: usize,
    /// Of them, the ones that failed in the baseline run in the sandbox.
    pub reproduced: usize,
    /// How the ranking was made (`localize::Method::label` and counts).
    pub localization: String,
    pub localization_ms: u64,
    /// The ranked functions, best first (at most [`START_RANKED`]): path, first and last line.
    pub ranked: Vec<(String, usize, usize)>,
}

/// Ranked functions a [`StartReport`] keeps.
pub const START_RANKED: usize = 10;

impl RepairResult {
    /// Everything passes already: no attempt ran.
    pub(super) fn nothing_failing(targets: Targets, model: String) -> RepairResult {
        RepairResult {
            outcome: Outcome::NothingFailing,
            patch: String::new(),
            after: None,
            model,
            targets,
            receipt: None,
            attempts: Vec::new(),
            strategy: None,
            stop: None,
            detail: String::new(),
            search: Default::default(),
            spent: Spend::default(),
            wall: Duration::ZERO,
            episode_wall: Duration::ZERO,
            verify_wall: Duration::ZERO,
            start: StartReport::default(),
        }
    }

    /// A patch was taken: a fresh container verified it (or, with no verification asked,
    /// the episode container's run passed).
    pub fn fixed(&self) -> bool {
        self.outcome.verified() || self.outcome == Outcome::Passing
    }

    /// Exit 0 (fixed or nothing failing) versus 1 (no fix).
    pub fn success(&self) -> bool {
        self.fixed() || self.outcome == Outcome::NothingFailing
    }

    /// The one-line outcome printed last.
    pub fn one_line(&self) -> String {
        let Some(stop) = self.stop else {
            return match self.targets.pre_existing.len() {
                0 => "nothing failing: the tests already pass".into(),
                n => format!(
                    "nothing to fix: the named tests already pass ({n} other failing tests are pre-existing)"
                ),
            };
        };
        let by = match (self.strategy, self.attempts.len()) {
            (Some(st), n) => format!("strategy {} (attempt {n} of the search), ", st.as_str()),
            (None, 0) => String::new(),
            (None, _) => {
                let ran: Vec<&str> = self.attempts.iter().map(|a| a.strategy.as_str()).collect();
                format!("stages {} ran, ", ran.join(" → "))
            }
        };
        let stats = format!(
            "{by}stop reason {stop}, {} steps, {} tokens, ${:.4}, {:.1}s, model {}",
            self.spent.steps,
            self.spent.usage.total(),
            self.spent.cost_usd,
            self.wall.as_secs_f64(),
            self.model
        );
        let verified = self.receipt.as_ref().map(|r| {
            format!(
                "verdict {}: {}",
                r.decision.verdict.as_str(),
                r.decision.reason
            )
        });
        match (self.fixed(), &verified) {
            (true, Some(v)) => format!("fixed: {v} ({stats})"),
            (true, None) => format!("fixed: the tests pass with the patch ({stats})"),
            (false, Some(v)) => format!("not fixed: {v} ({stats})"),
            (false, None) if self.outcome == Outcome::NothingFailing => "nothing failing".into(),
            (false, None) => {
                let why = if self.patch.trim().is_empty() {
                    "no patch".to_string()
                } else {
                    match self.after.as_ref().and_then(|a| a.summary.as_ref()) {
                        Some(s) => format!("{} tests still failing", s.failed + s.errors),
                        None => "the tests still fail".to_string(),
                    }
                };
                format!("not fixed: {why} ({stats}; {})", self.detail)
            }
        }
    }
}
