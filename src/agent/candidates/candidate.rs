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

/// Candidates' diffs a digest shows at most (the partial ones first), and bytes of each.
const DIGEST_DIFFS: usize = 2;
const DIGEST_DIFF_BYTES: usize = 800;

impl CandidatesOutcome {
    /// What the candidates tried, for the loop's first prompt: how many were drawn by
    /// outcome and shape, the sites filled most, and the diffs of the closest ones (partial
    /// fixes first, then the latest failing ones), so the loop neither repeats them nor
    /// starts from nothing. Empty when nothing was drawn. Pure.
    pub fn digest(&self) -> String {
        use std::collections::BTreeMap;
        if self.candidates.is_empty() {
            return String::new();
        }
        let mut by_status: BTreeMap<&str, usize> = BTreeMap::new();
        let mut by_shape: BTreeMap<String, usize> = BTreeMap::new();
        let mut sites: BTreeMap<&str, usize> = BTreeMap::new();
        for c in &self.candidates {
            *by_status.entry(c.status.as_str()).or_default() += 1;
            let shape = match &c.origin {
                Origin::Fill { at, shape, .. } => {
                    *sites.entry(at.as_str()).or_default() += 1;
                    shape.clone()
                }
                Origin::Rule { .. } => "rule".into(),
                Origin::Chat { .. } => "chat".into(),
                Origin::Loop => "loop".into(),
            };
            *by_shape.entry(shape).or_default() += 1;
        }
        fn join<K: std::fmt::Display>(m: &BTreeMap<K, usize>) -> String {
            m.iter()
                .map(|(k, n)| format!("{n} {k}"))
                .collect::<Vec<_>>()
                .join(", ")
        }
        let mut top: Vec<(&str, usize)> = sites.into_iter().collect();
        top.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let mut s = format!(
            "Earlier stages tried {} candidate edits ({}; by kind: {}), none verified.",
            self.candidates.len(),
            join(&by_status),
            join(&by_shape)
        );
        if !top.is_empty() {
            let at: Vec<String> = top
                .iter()
                .take(5)
                .map(|(a, n)| format!("{a} ×{n}"))
                .collect();
            s.push_str(&format!(" Sites filled most: {}.", at.join(", ")));
        }
        let mut shown: Vec<&Candidate> = self
            .candidates
            .iter()
            .filter(|c| c.status == Outcome::Partial && !c.diff.is_empty())
            .collect();
        shown.extend(
            self.candidates
                .iter()
                .rev()
                .filter(|c| c.status == Outcome::Failing && !c.diff.is_empty()),
        );
        for c in shown.into_iter().take(DIGEST_DIFFS) {
            let what = if c.status == Outcome::Partial {
                format!("fixes {} of the failing tests", c.fixed.len())
            } else {
                "still fails".to_string()
            };
            let mut d = c.diff.clone();
            if d.len() > DIGEST_DIFF_BYTES {
                let mut cut = DIGEST_DIFF_BYTES;
                while !d.is_char_boundary(cut) {
                    cut -= 1;
                }
                d.truncate(cut);
                d.push_str("\n…");
            }
            s.push_str(&format!(
                "\n\nThis one {what}:\n```diff\n{}\n```",
                d.trim_end()
            ));
        }
        s
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
