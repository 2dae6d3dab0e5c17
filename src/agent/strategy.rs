//! The strategies behind one call: each turns a model tier and the problem into an
//! [`Attempt`] of the one shape (what it spent, what it proposes, why it stopped). The search
//! (`pipeline::search`) folds over strategies × tiers with [`attempt`] and never looks inside.

use crate::agent::attempt::{Attempt, AttemptResult, Ledger, Proposal, StopReason};
use crate::agent::candidates::{self, CandidateConfig, Problem};
use crate::agent::episode::{self, EpisodeConfig};
use crate::agent::model::Model;
use crate::agent::trajectory::Trajectory;
use crate::sandbox::Sandbox;

pub use crate::config::repair::Strategy;

/// What every strategy starts from (the same for every attempt of a repair).
#[derive(Clone, Copy)]
pub struct Start<'a> {
    pub sandbox: &'a dyn Sandbox,
    /// The loop's first prompt.
    pub task: &'a str,
    /// The candidates' inputs: targets, report, context, files, fault localization.
    pub problem: &'a Problem,
    /// Every test failing before (targets and pre-existing).
    pub failing: &'a [String],
    /// The loop's budgets (its step cap) and the tools' settings.
    pub episode: &'a EpisodeConfig,
    pub candidates: &'a CandidateConfig,
    pub ledger: &'a Ledger,
}

/// The sandbox or the model server failed: not the model's doing, so the repair stops with
/// an infrastructure error (exit 2) instead of trying the next strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct Infrastructure {
    pub detail: String,
    /// The workspace diff when it happened (written out, so nothing is lost).
    pub patch: String,
    /// Loop steps completed.
    pub steps: usize,
}

/// Run `strategy` with `model` (tier `tier`); its trajectory nodes hang under `id`.
pub async fn attempt(
    strategy: Strategy,
    model: &dyn Model,
    tier: usize,
    id: &str,
    s: &Start<'_>,
    traj: &mut Trajectory,
) -> Result<Attempt, Infrastructure> {
    let before = s.ledger.total();
    let mut a = match strategy {
        Strategy::Candidates => candidates_attempt(model, tier, id, s, traj).await?,
        Strategy::Loop => loop_attempt(model, tier, s, traj).await?,
    };
    a.spent = s.ledger.total().since(&before);
    Ok(a)
}

async fn candidates_attempt(
    model: &dyn Model,
    tier: usize,
    id: &str,
    s: &Start<'_>,
    traj: &mut Trajectory,
) -> Result<Attempt, Infrastructure> {
    let run = candidates::Run {
        model,
        tier,
        sandbox: s.sandbox,
        problem: s.problem,
        baseline_failing: s.failing,
        config: s.candidates,
        tools: &s.episode.tools,
        ledger: s.ledger,
        attempt: id,
    };
    let c = candidates::run(run, traj).await;
    if let Some(e) = &c.infrastructure {
        return Err(Infrastructure {
            detail: e.clone(),
            patch: String::new(),
            steps: 0,
        });
    }
    if let Some(n) = &c.note {
        tracing::info!("candidates: {n}");
    }
    // The passing ones, best first (`CandidatesOutcome::passing`: nothing the verifier's
    // generalisation layers flag, then the most faithful, then the smallest).
    let proposals: Vec<Proposal> = c
        .passing(s.problem)
        .into_iter()
        .map(|p| Proposal {
            patch: p.candidate.diff.clone(),
            checked: true,
            node: Some(format!("{id}.c{}", p.candidate.index)),
            reply: p.candidate.reply.clone(),
            tokens: p.candidate.usage.total(),
            model_ms: p.candidate.model_ms,
            rollback_ms: p.candidate.rollback_ms,
            note: {
                let mut n = format!("{} tokens changed", p.faithful.distance);
                if !p.faithful.dropped.is_empty() {
                    n.push_str(&format!("; drops {}", p.faithful.dropped.join(", ")));
                }
                if !p.fitted.is_empty() {
                    n.push_str(&format!("; looks fitted: {}", p.fitted.join(", ")));
                }
                n
            },
            drops: p.faithful.dropped.clone(),
        })
        .collect();
    let stop = match (c.budget, proposals.is_empty()) {
        (_, false) => StopReason::Submitted,
        (Some(cap), true) => cap,
        (None, true) => StopReason::NoCandidate,
    };
    let note = c.note.clone().unwrap_or_else(|| {
        format!(
            "{} candidates, {} passed the tests in the sandbox",
            c.candidates.len(),
            proposals.len()
        )
    });
    let mut a = Attempt::new(stop, note);
    a.drawn = c.candidates.len();
    a.passing = proposals.len();
    a.nothing = if c.candidates.is_empty() && c.note.is_some() && c.budget.is_none() {
        AttemptResult::NoSuspect
    } else {
        AttemptResult::NotPassing
    };
    a.proposals = proposals;
    Ok(a)
}

async fn loop_attempt(
    model: &dyn Model,
    tier: usize,
    s: &Start<'_>,
    traj: &mut Trajectory,
) -> Result<Attempt, Infrastructure> {
    let o = episode::run_on(model, tier, s.sandbox, s.task, s.episode, s.ledger, traj).await;
    if let Some(e) = &traj.write_error {
        tracing::warn!("the trajectory is incomplete: {e}");
    }
    if o.infrastructure {
        return Err(Infrastructure {
            detail: o.detail,
            patch: o.patch,
            steps: o.steps,
        });
    }
    let mut a = Attempt::new(o.stop, o.detail);
    a.steps = o.steps;
    a.dirty = !o.patch.trim().is_empty();
    if a.dirty {
        a.proposals.push(Proposal {
            patch: o.patch,
            checked: false,
            ..Proposal::default()
        });
    }
    Ok(a)
}
