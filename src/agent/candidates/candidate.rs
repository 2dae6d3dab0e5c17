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
    let input = crate::verify::fit::FitInput::of_edits(
        &edits_of(c, problem),
        problem.tests.clone(),
        &problem.targets,
    );
    let mut kinds: Vec<String> = crate::verify::fit::assess(&input)
        .findings
        .into_iter()
        .map(|f| f.kind)
        .collect();
    kinds.dedup();
    kinds
}

/// The attempt's passing candidates compared on generated inputs
/// ([`crate::verify::consensus`]).
#[derive(Debug, Clone)]
pub struct Compared {
    pub consensus: crate::verify::consensus::Consensus,
    /// Per passing candidate (in [`CandidatesOutcome::passing`]'s order), its index among
    /// the compared ones: identical diffs share one; past
    /// [`crate::verify::consensus::MAX_CANDIDATES`] distinct ones, `None`.
    pub of: Vec<Option<usize>>,
}

impl Compared {
    /// What the verifier is told about passing candidate `i`.
    pub fn evidence(&self, i: usize) -> Option<crate::verify::consensus::Evidence> {
        Some(self.consensus.evidence((*self.of.get(i)?)?))
    }

    fn outvoted(&self, i: usize) -> bool {
        self.of
            .get(i)
            .copied()
            .flatten()
            .is_some_and(|k| self.consensus.outvoted(k) > 0)
    }
}

/// Which passing candidates to compare: each distinct diff once, the best
/// [`crate::verify::consensus::MAX_CANDIDATES`]; `None` when fewer than two. Pure.
pub fn distinct(passing: &[Passing<'_>]) -> Option<(Vec<usize>, Vec<Option<usize>>)> {
    let mut reps: Vec<usize> = Vec::new();
    let mut of = Vec::with_capacity(passing.len());
    for (i, p) in passing.iter().enumerate() {
        let same = reps
            .iter()
            .position(|&r| passing[r].candidate.diff == p.candidate.diff);
        of.push(same.or_else(|| {
            (reps.len() < crate::verify::consensus::MAX_CANDIDATES).then(|| {
                reps.push(i);
                reps.len() - 1
            })
        }));
    }
    (reps.len() >= 2).then_some((reps, of))
}

/// Run the comparison of `passing` in `sandbox` (the unpatched checkout): `None` when there
/// are fewer than two distinct candidates, no visible failing test to record calls with, or
/// no changed Python function to call.
pub async fn compare(
    sandbox: &dyn crate::sandbox::Sandbox,
    test_cmd: &crate::testcmd::TestCommand,
    problem: &Problem,
    passing: &[Passing<'_>],
    per_function: Duration,
) -> Option<Result<Compared, String>> {
    if problem.targets.is_empty() {
        return None;
    }
    let (reps, of) = distinct(passing)?;
    let files: Vec<Vec<crate::verify::signals::ChangedFile>> = reps
        .iter()
        .map(|&r| changed_files(passing[r].candidate, problem))
        .collect();
    // No Python function a test can call (another language, a module-level change): nothing
    // to compare, and nothing is claimed.
    if crate::verify::consensus::plan(&files).0.is_empty() {
        return None;
    }
    Some(
        crate::verify::consensus::run(sandbox, test_cmd, &problem.targets, &files, per_function)
            .await
            .map(|consensus| Compared { consensus, of }),
    )
}

/// The order the passing candidates are proposed in: their ranking
/// ([`CandidatesOutcome::passing`]), except that one the others outvoted goes after those
/// they did not — below the layers' findings and a dropped parameter or callee, which
/// already make it `needs_review`. Pure.
pub fn order(passing: &[Passing<'_>], compared: Option<&Compared>) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..passing.len()).collect();
    idx.sort_by_key(|&i| {
        (
            passing[i].fitted.len(),
            passing[i].faithful.dropped.len(),
            compared.is_some_and(|c| c.outvoted(i)),
        )
    });
    idx
}

/// A candidate's files as (path, text before — `None`: new —, text after).
fn edits_of(c: &Candidate, problem: &Problem) -> Vec<(String, Option<String>, String)> {
    c.edits
        .iter()
        .map(|e| {
            (
                e.path.clone(),
                problem.files.get(&e.path).cloned(),
                e.content.clone(),
            )
        })
        .collect()
}

/// A candidate's Python files before and after it (what the verifier's layers read).
fn changed_files(c: &Candidate, problem: &Problem) -> Vec<crate::verify::signals::ChangedFile> {
    crate::verify::fit::FitInput::of_edits(&edits_of(c, problem), Vec::new(), &[]).files
}

#[cfg(test)]
mod consensus_tests {
    use super::*;
    use crate::verify::consensus::{Consensus, Outvoted, Row};

    fn cand(index: usize, diff: &str) -> Candidate {
        Candidate {
            diff: diff.into(),
            status: Outcome::Passing,
            ..Candidate::blank(index, 0)
        }
    }

    fn passing(c: &Candidate) -> Passing<'_> {
        Passing {
            candidate: c,
            faithful: Faithfulness::default(),
            fitted: Vec::new(),
        }
    }

    #[test]
    fn identical_diffs_are_compared_once_and_one_distinct_candidate_is_not_compared() {
        let cs = [cand(0, "a"), cand(1, "b"), cand(2, "a"), cand(3, "c")];
        let p: Vec<Passing> = cs.iter().map(passing).collect();
        let (reps, of) = distinct(&p).unwrap();
        assert_eq!(reps, [0, 1, 3]);
        assert_eq!(of, [Some(0), Some(1), Some(0), Some(2)]);
        let same = [cand(0, "a"), cand(1, "a")];
        let p: Vec<Passing> = same.iter().map(passing).collect();
        assert!(distinct(&p).is_none());
        // Past the cap, the rest are not compared (and not reordered).
        let many: Vec<Candidate> = (0..8).map(|i| cand(i, &i.to_string())).collect();
        let p: Vec<Passing> = many.iter().map(passing).collect();
        let (reps, of) = distinct(&p).unwrap();
        assert_eq!(reps.len(), crate::verify::consensus::MAX_CANDIDATES);
        assert_eq!(of[7], None);
    }

    #[test]
    fn an_outvoted_candidate_is_not_proposed_first_but_a_flagged_one_stays_behind_it() {
        let cs = [cand(0, "wrong"), cand(1, "fix"), cand(2, "fix too")];
        let mut p: Vec<Passing> = cs.iter().map(passing).collect();
        let outvoted = |k: usize| Compared {
            consensus: Consensus {
                candidates: 3,
                rows: vec![Row {
                    compared: vec![0, 1, 2],
                    outvoted: vec![Outvoted {
                        candidate: k,
                        inputs: 4,
                        call: "f(20)".into(),
                        answer: "returns `10`".into(),
                        majority: "returns `5`".into(),
                    }],
                    ..Row::default()
                }],
                ..Consensus::default()
            },
            of: vec![Some(0), Some(1), Some(2)],
        };
        assert_eq!(order(&p, None), [0, 1, 2]);
        assert_eq!(order(&p, Some(&outvoted(0))), [1, 2, 0]);
        assert!(outvoted(0).evidence(0).is_some());
        // A candidate the layers flag already goes last and is `needs_review`; being
        // outvoted does not move an unflagged one below it.
        p[2].fitted = vec!["test_literal_branch".into()];
        assert_eq!(order(&p, Some(&outvoted(0))), [1, 0, 2]);
    }
}
