//! The strategies behind one trait: each turns a metered model and the problem into an
//! [`Attempt`] of the one shape (what it proposes, why it stopped, what it did). The search
//! (`pipeline::search`) folds over strategies × tiers through [`RepairStrategy::attempt`] and
//! never looks inside; a new strategy is one more implementation and one arm of [`of`].

use async_trait::async_trait;

use crate::agent::attempt::{Attempt, Detail, Ledger, Metered, Outcome, Proposal, StopReason};
use crate::agent::candidates::{self, CandidateConfig, Problem};
use crate::agent::episode::{self, EpisodeConfig};
use crate::agent::origin::Origin;
use crate::agent::trajectory::Trajectory;
use crate::sandbox::Sandbox;
use crate::verify::consensus::Evidence;

pub use crate::config::repair::Strategy;

/// What every strategy starts from (the same for every attempt of a repair).
#[derive(Clone, Copy)]
pub struct Start<'a> {
    pub sandbox: &'a dyn Sandbox,
    /// The loop's first prompt (with what earlier stages tried, when they did).
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

/// One way of turning a model into proposals.
#[async_trait]
pub trait RepairStrategy: Send + Sync {
    fn kind(&self) -> Strategy;
    /// Why it would draw nothing here, if so: the search then skips it and says why (the
    /// model has no fill-in-the-middle, the localization left no site of its shapes). Pure.
    fn declines(&self, _model: &dyn crate::agent::model::Model, _s: &Start<'_>) -> Option<String> {
        None
    }

    /// One attempt with `model` (every call metered); its trajectory nodes hang under `node`.
    async fn attempt(
        &self,
        model: &Metered<'_>,
        s: &Start<'_>,
        node: &str,
        traj: &mut Trajectory,
    ) -> Result<Attempt, Infrastructure>;
}

/// The implementation of a configured strategy.
pub fn of(kind: Strategy) -> &'static dyn RepairStrategy {
    match kind {
        Strategy::Candidates => &Candidates(Strategy::Candidates),
        Strategy::Shapes => &Candidates(Strategy::Shapes),
        Strategy::Sampled => &Candidates(Strategy::Sampled),
        Strategy::Loop => &Loop,
    }
}

/// The candidates' stage a strategy runs as (`None`: the loop).
pub fn stage_of(kind: Strategy, pass: usize) -> Option<candidates::Stage> {
    match kind {
        Strategy::Candidates => Some(candidates::Stage::First),
        Strategy::Shapes => Some(candidates::Stage::Shapes),
        Strategy::Sampled => Some(candidates::Stage::Sampled { pass }),
        Strategy::Loop => None,
    }
}

/// Rules, then fills or chat samples, each checked in the sandbox ([`candidates::run`]); the
/// stage ([`Start::candidates`]' `stage`) says which of them.
pub struct Candidates(Strategy);

#[async_trait]
impl RepairStrategy for Candidates {
    fn kind(&self) -> Strategy {
        self.0
    }

    fn declines(&self, model: &dyn crate::agent::model::Model, s: &Start<'_>) -> Option<String> {
        use candidates::{EditFormat, Stage};
        let cfg = s.candidates;
        if cfg.stage == Stage::First {
            return None;
        }
        if cfg.format != EditFormat::Infill {
            return Some(format!(
                "it draws fills, and the edit format is {}",
                cfg.format.as_str()
            ));
        }
        if !model.supports_infill() {
            return Some("the model has no fill-in-the-middle".into());
        }
        let shapes = cfg.stage_shapes();
        if shapes.is_empty() {
            return Some("the first stage filled every multi-line shape".into());
        }
        if candidates::infill_sites(&s.problem.ranked, &s.problem.files, &shapes).is_empty() {
            let names: Vec<&str> = shapes.iter().map(|x| x.as_str()).collect();
            return Some(format!(
                "the fault localization left no site for {}",
                names.join(", ")
            ));
        }
        None
    }

    async fn attempt(
        &self,
        model: &Metered<'_>,
        s: &Start<'_>,
        node: &str,
        traj: &mut Trajectory,
    ) -> Result<Attempt, Infrastructure> {
        let run = candidates::Run {
            model,
            sandbox: s.sandbox,
            problem: s.problem,
            baseline_failing: s.failing,
            config: s.candidates,
            tools: &s.episode.tools,
            attempt: node,
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
        // generalisation layers flag, then the most faithful, then the smallest); two or more
        // are compared on generated inputs, and one the others outvote goes after them.
        let passing = c.passing(s.problem);
        let compared = match s.candidates.consensus {
            Some(per_function) => {
                candidates::compare(
                    s.sandbox,
                    &s.episode.tools.test_cmd,
                    s.problem,
                    &passing,
                    per_function,
                )
                .await
            }
            None => None,
        };
        let compared = compared.map(|r| {
            r.inspect_err(|e| tracing::warn!("comparing the passing candidates failed: {e}"))
        });
        let ok = compared.as_ref().and_then(|r| r.as_ref().ok());
        let proposals: Vec<Proposal> = candidates::order(&passing, ok)
            .into_iter()
            .map(|i| (i, &passing[i]))
            .map(|(i, p)| Proposal {
                patch: p.candidate.diff.clone(),
                checked: true,
                origin: p.candidate.origin.clone(),
                node: Some(format!("{node}.c{}", p.candidate.index)),
                reply: p.candidate.reply.clone(),
                tokens: p.candidate.usage.total(),
                model_ms: p.candidate.model_ms,
                rollback_ms: p.candidate.rollback_ms,
                note: {
                    let mut n = format!("{} tokens changed", p.faithful.distance);
                    if !p.faithful.dropped.is_empty() {
                        n.push_str(&format!("; drops {}", p.faithful.dropped.join(", ")));
                    }
                    if !p.faithful.dropped_here.is_empty() {
                        n.push_str(&format!(
                            "; leaves out {}",
                            p.faithful.dropped_here.join(", ")
                        ));
                    }
                    if !p.fitted.is_empty() {
                        n.push_str(&format!("; looks fitted: {}", p.fitted.join(", ")));
                    }
                    n
                },
                drops: p.faithful.dropped.clone(),
                consensus: match &compared {
                    Some(Ok(c)) => c.evidence(i),
                    Some(Err(e)) => Some(Evidence::failed(e.clone())),
                    None => None,
                },
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
        let detail = Detail::Candidates {
            drawn: c.candidates.len(),
            passing: proposals.len(),
        };
        let mut a = Attempt::new(stop, note, detail);
        a.digest = c.digest();
        a.fresh = c
            .candidates
            .iter()
            .filter(|x| {
                matches!(
                    x.status,
                    Outcome::Failing | Outcome::Partial | Outcome::Passing
                )
            })
            .count();
        a.nothing = if c.candidates.is_empty() && c.note.is_some() && c.budget.is_none() {
            Outcome::NoSuspect
        } else {
            Outcome::NotPassing
        };
        a.proposals = proposals;
        Ok(a)
    }
}

/// The agent loop: the model with the tools until it submits or a budget ends it.
pub struct Loop;

#[async_trait]
impl RepairStrategy for Loop {
    fn kind(&self) -> Strategy {
        Strategy::Loop
    }

    async fn attempt(
        &self,
        model: &Metered<'_>,
        s: &Start<'_>,
        _node: &str,
        traj: &mut Trajectory,
    ) -> Result<Attempt, Infrastructure> {
        let o = episode::run_on(model, s.sandbox, s.task, s.episode, traj).await;
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
        let mut a = Attempt::new(o.stop, o.detail, Detail::Loop { steps: o.steps });
        a.dirty = !o.patch.trim().is_empty();
        if a.dirty {
            a.proposals.push(Proposal {
                patch: o.patch,
                checked: false,
                origin: Origin::Loop,
                ..Proposal::default()
            });
        }
        Ok(a)
    }
}
