//! A drawn candidate after its check, what a run found, and how passing ones are ranked.

use std::time::Duration;

use super::faithful::{self, Faithfulness};
use super::{FileEdit, Outcome, Problem};
use crate::agent::attempt::StopReason;
use crate::agent::model::{FillTimings, Usage};
use crate::agent::origin::Origin;

/// One candidate after its check.
#[derive(Debug, Clone)]
pub struct Candidate {
    pub index: usize,
    pub status: Outcome,
    pub detail: String,
    /// The workspace diff with the candidate applied (passing and failing ones).
    pub diff: String,
    pub usage: Usage,
    pub model_ms: u64,
    /// Applying it, checking it, taking its diff and rolling back, in the container.
    pub check_ms: u64,
    /// The rollback alone.
    pub rollback_ms: u64,
    /// The model's reply as received.
    pub reply: String,
    /// The files it rewrote (checked candidates), for ranking by faithfulness.
    pub edits: Vec<FileEdit>,
    /// The server's prompt and generation time for a fill, when it says.
    pub timings: Option<FillTimings>,
    /// `partial` candidates: the targets it makes pass (the others still fail).
    pub fixed: Vec<String>,
    /// Where it came from: a rule, a fill (its shape and draw) or a chat reply.
    pub origin: Origin,
}

impl Candidate {
    /// A candidate not yet checked (status `error` until something says otherwise).
    pub(super) fn blank(index: usize, model_ms: u64) -> Self {
        Candidate {
            index,
            status: Outcome::Error,
            detail: String::new(),
            diff: String::new(),
            usage: Usage::default(),
            model_ms,
            check_ms: 0,
            rollback_ms: 0,
            reply: String::new(),
            edits: Vec::new(),
            timings: None,
            fixed: Vec::new(),
            origin: Origin::default(),
        }
    }

    /// Changed lines of the diff (`+`/`-` lines, headers excluded): the size the winner is
    /// chosen by.
    pub fn diff_size(&self) -> usize {
        diff_size(&self.diff)
    }
}

/// `+`/`-` lines of a unified diff, headers excluded. Pure.
pub fn diff_size(diff: &str) -> usize {
    diff.lines()
        .filter(|l| {
            (l.starts_with('+') && !l.starts_with("+++"))
                || (l.starts_with('-') && !l.starts_with("---"))
        })
        .count()
}

/// What the strategy spent and found.
#[derive(Debug, Clone, Default)]
pub struct CandidatesOutcome {
    pub candidates: Vec<Candidate>,
    pub model_ms: u64,
    pub wall: Duration,
    /// Why it drew fewer than asked, or found nothing to work on.
    pub note: Option<String>,
    /// The ledger's cap that stopped the drawing, if one did.
    pub budget: Option<StopReason>,
    /// The sandbox failed (not the model's doing).
    pub infrastructure: Option<String>,
}

impl CandidatesOutcome {
    /// Passing candidates, best first: those the verifier's pure generalisation layers
    /// find nothing in ([`crate::verify::fit::assess`]: special cases for the tested inputs,
    /// swallowed errors, dropped features, …), then the most faithful to the code they
    /// replace ([`Faithfulness::key`]: none of its parameters or callees dropped, then the
    /// fewest tokens changed), then the smallest diff, then drawing order.
    pub fn passing(&self, problem: &Problem) -> Vec<Passing<'_>> {
        let mut v: Vec<Passing> = self
            .candidates
            .iter()
            .filter(|c| c.status == Outcome::Passing)
            .map(|c| Passing::of(c, problem))
            .collect();
        v.sort_by_key(|p| {
            (
                p.fitted.len(),
                p.faithful.key(),
                p.candidate.diff_size(),
                p.candidate.index,
            )
        });
        v
    }
}

/// A passing candidate with what ranks it.
#[derive(Debug)]
pub struct Passing<'a> {
    pub candidate: &'a Candidate,
    pub faithful: Faithfulness,
    /// The kinds of the generalisation layers' findings (empty: it looks like a fix).
    pub fitted: Vec<String>,
}

impl<'a> Passing<'a> {
    /// What ranks `c` (pure, milliseconds: no container).
    pub fn of(c: &'a Candidate, problem: &Problem) -> Self {
        Passing {
            candidate: c,
            faithful: faithful::assess(&c.edits, &problem.files),
            fitted: fitted(c, problem),
        }
    }

    /// Nothing the generalisation layers flag and nothing of the replaced code's parameters
    /// or callees dropped: the search can stop soon after it ([`super::runner::drawn_enough`]).
    pub fn clean(&self) -> bool {
        self.fitted.is_empty() && self.faithful.dropped.is_empty()
    }
}

/// The verifier's pure layers on one candidate's edits (milliseconds; no container).
fn fitted(c: &Candidate, problem: &Problem) -> Vec<String> {
    let edits: Vec<(String, Option<String>, String)> = c
        .edits
        .iter()
        .map(|e| {
            (
                e.path.clone(),
                problem.files.get(&e.path).cloned(),
                e.content.clone(),
            )
        })
        .collect();
    let input =
        crate::verify::fit::FitInput::of_edits(&edits, problem.tests.clone(), &problem.targets);
    let mut kinds: Vec<String> = crate::verify::fit::assess(&input)
        .findings
        .into_iter()
        .map(|f| f.kind)
        .collect();
    kinds.dedup();
    kinds
}
