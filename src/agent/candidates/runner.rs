//! Drawing the candidates, in rounds, and checking each in the container as it comes. Where
//! they come from is the draw sources' business ([`super::sources`]); a round hands their
//! candidates to the check in order, and stops when enough is drawn or the ledger says so.

use std::collections::{BTreeSet, VecDeque};
use std::time::{Duration, Instant};

use futures_util::StreamExt;

use super::candidate::{Candidate, CandidatesOutcome, Passing};
use super::check::{Against, assess, write_all};
use super::edits::FileEdit;
use super::infill::infill_sites;
use super::prompt::{SYSTEM, prompt};
use super::propagate::span;
use super::sources::{self, Done, Draw, FillMemo, Read, Reply, Round};
use super::suspects::{suspects, suspects_ranked};
use super::{CandidateConfig, EditFormat, Outcome, Problem};
use crate::agent::attempt::Metered;
use crate::agent::localize::Ranked;
use crate::agent::model::{Message, Model, ModelError};
use crate::agent::tools::ToolConfig;
use crate::agent::trajectory::{NodeRecord, Trajectory};
use crate::sandbox::{Sandbox, SandboxError};

/// One run of the strategy: the model on its tier, the container, the problem, the knobs and
/// the ledger every model call is checked against and charged to.
#[derive(Clone, Copy)]
pub struct Run<'a> {
    /// The model on its tier, every call asked of and charged to the repair's ledger.
    pub model: &'a Metered<'a>,
    pub sandbox: &'a dyn Sandbox,
    pub problem: &'a Problem,
    /// The tests that failed before (targets included): a candidate under which any other
    /// test fails is `failing`.
    pub baseline_failing: &'a [String],
    pub config: &'a CandidateConfig,
    pub tools: &'a ToolConfig,
    /// The trajectory node of this attempt (`t0.candidates`); candidates hang under it.
    pub attempt: &'a str,
}

/// Rounds of drawing at most: a round that ends on a `partial` candidate (some targets pass,
/// nothing else broke) starts the next one on top of it, for the targets still failing.
pub const MAX_ROUNDS: usize = 3;

/// Draw the candidates and check each in the run's container (see the module docs), in
/// rounds, for fixes that must change two places. Within a round, a `partial` candidate is
/// also checked together with an earlier one that fixes other targets (the check's second
/// look: a separator ignored by two functions, each with its test). A round that ends without a
/// pass but with a `partial` candidate starts the next on top of it (the one fixing the
/// most targets): its edit stays in the workspace, only the targets still failing are
/// asked for, and a test it fixed must not break again; the next round's diffs hold both
/// edits. The workspace gets the original files back at the end.
pub async fn run(r: Run<'_>, traj: &mut Trajectory) -> CandidatesOutcome {
    let started = Instant::now();
    let memo = FillMemo::default();
    let mut out = round(r, traj, 0, &memo).await;
    let mut problem = r.problem.clone();
    let mut baseline = r.baseline_failing.to_vec();
    // The edits kept in the workspace, by path (the latest content of each file).
    let mut kept: Vec<FileEdit> = Vec::new();
    let mut from = 0;
    for n in 2..=MAX_ROUNDS {
        let last = &out.candidates[from..];
        if out.infrastructure.is_some()
            || out.budget.is_some()
            || last.iter().any(|c| c.status == Outcome::Passing)
        {
            break;
        }
        // The step that fixed the most targets, the earliest of those.
        let Some(step) = last
            .iter()
            .filter(|c| c.status == Outcome::Partial)
            .max_by_key(|c| (c.fixed.len(), std::cmp::Reverse(c.index)))
        else {
            break;
        };
        let step = step.clone();
        for e in &step.edits {
            let before = problem.files.get(&e.path).cloned().unwrap_or_default();
            problem.ranked = shift_ranked(&problem.ranked, &e.path, &before, &e.content);
            problem.files.insert(e.path.clone(), e.content.clone());
            kept.retain(|k| k.path != e.path);
            kept.push(e.clone());
        }
        problem.targets.retain(|t| !step.fixed.contains(t));
        baseline.retain(|t| !step.fixed.contains(t));
        if let Err(e) = write_all(r.sandbox, &step.edits).await {
            out.infrastructure = Some(format!("keeping candidate {}: {e}", step.index));
            break;
        }
        traj.event(
            "candidates_round",
            &serde_json::json!({
                "attempt": r.attempt,
                "round": n,
                "kept": step.index,
                "fixed": step.fixed,
                "targets": problem.targets,
            }),
        );
        from = out.candidates.len();
        let offset = out
            .candidates
            .iter()
            .map(|c| c.index + 1)
            .max()
            .unwrap_or(0);
        let next = round(
            Run {
                problem: &problem,
                baseline_failing: &baseline,
                ..r
            },
            traj,
            offset,
            &memo,
        )
        .await;
        out.absorb(next, &kept);
    }
    // The original bytes back for whatever was kept (the verifier starts from a fresh
    // container; the next strategy starts from this one).
    let originals: Vec<FileEdit> = kept
        .iter()
        .filter_map(|k| {
            r.problem.files.get(&k.path).map(|c| FileEdit {
                path: k.path.clone(),
                content: c.clone(),
            })
        })
        .collect();
    if let Err(e) = write_all(r.sandbox, &originals).await
        && out.infrastructure.is_none()
    {
        out.infrastructure = Some(format!("restoring the files after the rounds: {e}"));
    }
    out.wall = started.elapsed();
    out
}

impl CandidatesOutcome {
    /// Add a later round's outcome; its candidates' edits get the kept edits of other files
    /// (what the verifier's layers and the faithfulness ranking see is the whole change).
    fn absorb(&mut self, next: CandidatesOutcome, kept: &[FileEdit]) {
        for mut c in next.candidates {
            if !c.edits.is_empty() {
                for k in kept {
                    if !c.edits.iter().any(|e| e.path == k.path) {
                        c.edits.push(k.clone());
                    }
                }
            }
            self.candidates.push(c);
        }
        self.model_ms += next.model_ms;
        self.note = next.note.or(self.note.take());
        self.budget = next.budget;
        self.infrastructure = next.infrastructure;
    }
}

/// The fault localization's ranking after `path` changed from `before` to `after`: lines in
/// the changed span are dropped (they were just filled), lines below it move by the change
/// in line count, and so do the functions' spans. Pure.
pub fn shift_ranked(ranked: &[Ranked], path: &str, before: &str, after: &str) -> Vec<Ranked> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let (pre, end) = span(&a, &b);
    // The changed span of `before`, 1-based inclusive (empty for a pure insertion: first > last).
    let (first, last) = (pre + 1, end);
    let delta = b.len() as i64 - a.len() as i64;
    let moved = |l: usize| (l as i64 + delta).max(1) as usize;
    ranked
        .iter()
        .map(|r| {
            if r.loc.path != path {
                return r.clone();
            }
            let mut r = r.clone();
            r.lines = r
                .lines
                .iter()
                .filter(|(l, _)| !(first..=last).contains(l))
                .map(|&(l, s)| (if l > last { moved(l) } else { l }, s))
                .collect();
            if r.loc.start > last {
                r.loc.start = moved(r.loc.start);
            }
            if r.loc.end >= last.max(pre) {
                r.loc.end = moved(r.loc.end);
            }
            r
        })
        .collect()
}

/// One round of drawing: what the draw sources hand over with no model call, then the
/// model's turn over the queue of their draws, each candidate checked in the run's container.
/// Candidate indices start at `offset`.
async fn round(
    r: Run<'_>,
    traj: &mut Trajectory,
    offset: usize,
    memo: &FillMemo,
) -> CandidatesOutcome {
    let started = Instant::now();
    let mut out = CandidatesOutcome::default();
    let problem = r.problem;
    let suspects = if problem.ranked.is_empty() {
        suspects(&problem.context.focus.code, &problem.files)
    } else {
        suspects_ranked(&problem.ranked, &problem.context.focus.code, &problem.files)
    };
    if suspects.is_empty() {
        out.note = Some(
            "no function to rewrite: the failing-code context located no code under test".into(),
        );
        out.wall = started.elapsed();
        return out;
    }
    let mut round = Round {
        model: r.model,
        problem,
        config: r.config,
        offset,
        suspects,
        sites: Vec::new(),
        history: Vec::new(),
        memo,
    };
    let against = Against {
        sandbox: r.sandbox,
        problem,
        baseline_failing: r.baseline_failing,
        tools: r.tools,
    };
    // The edits checked in this round: the same edit again is a `duplicate`.
    let mut seen: BTreeSet<Vec<(String, String)>> = BTreeSet::new();
    if given_first(&r, &round, against, traj, &mut seen, &mut out).await {
        out.note = Some("a rule-based candidate passed: no fill drawn".into());
    } else if out.infrastructure.is_none() {
        let overlap = overlap_checks(r.config, r.model);
        let (first, queue) = open(&r, &mut round, overlap, traj).await;
        let drawing = Drawing {
            r: &r,
            round: &round,
            against,
            overlap,
        };
        drawing.draw(first, queue, traj, &mut seen, &mut out).await;
    }
    out.candidates.sort_by_key(|c| c.index);
    out.wall = started.elapsed();
    out
}

/// What the sources hand over with no model call ([`sources::given`]: the rules), checked one
/// at a time before any draw. They stop at the first clean pass (true: nothing is drawn) or a
/// container failure.
async fn given_first(
    r: &Run<'_>,
    round: &Round<'_>,
    at: Against<'_>,
    traj: &mut Trajectory,
    seen: &mut BTreeSet<Vec<(String, String)>>,
    out: &mut CandidatesOutcome,
) -> bool {
    for (by, read) in sources::given(round) {
        let mut cand = Candidate::blank(round.offset + out.candidates.len(), 0);
        if let Err(e) = check_read(at, read, &out.candidates, seen, &mut cand).await {
            out.infrastructure = Some(format!("checking {by} candidate {}: {e}", cand.index));
            cand.detail = e.to_string();
        }
        record(traj, r, &cand);
        let clean = cand.status == Outcome::Passing && Passing::of(&cand, at.problem).clean();
        out.candidates.push(cand);
        if clean || out.infrastructure.is_some() {
            return clean;
        }
    }
    false
}

/// A draw asked, as it reaches the checks.
struct Asked {
    /// Its place in the model's turn (0: the first reply).
    i: usize,
    draw: Draw,
    reply: Result<Reply, ModelError>,
    took: Duration,
}

/// Open the model's turn: the sites fills can be drawn at, the queue of every source's
/// planned draws, and the prompt in the trajectory. The first fill is asked here, alone: a
/// server that refuses fill-in-the-middle (an Ollama model whose template has no suffix, a
/// server that strips the special tokens) leaves the chat prompt, not a row of errors.
async fn open(
    r: &Run<'_>,
    round: &mut Round<'_>,
    overlap: bool,
    traj: &mut Trajectory,
) -> (Option<Asked>, VecDeque<Draw>) {
    let (cfg, problem) = (round.config, round.problem);
    // Fill-in-the-middle on the most suspicious lines when the model has it and the fault
    // localization scored lines; else the chat prompt (`infill`'s fallback is `lines`).
    if cfg.format == EditFormat::Infill && r.model.supports_infill() {
        round.sites = infill_sites(&problem.ranked, &problem.files, &cfg.stage_shapes());
    }
    let mut queue = sources::plan(round);
    let mut first = None;
    let mut fallback = None;
    if !round.sites.is_empty()
        && r.model.ledger().check().is_none()
        && let Some(draw) = queue.pop_front()
    {
        let t0 = Instant::now();
        match draw.by.ask(round, &draw).await {
            Err(e @ (ModelError::Rejected { .. } | ModelError::Unsupported(_))) => {
                tracing::warn!("fill-in-the-middle refused, asking for lines instead: {e}");
                fallback = Some(format!("fill-in-the-middle refused: {e}"));
                round.sites.clear();
                queue = sources::plan(round);
            }
            reply => {
                first = Some(Asked {
                    i: 0,
                    draw,
                    reply,
                    took: t0.elapsed(),
                })
            }
        }
    }
    let user = if round.sites.is_empty() {
        prompt(problem, &round.suspects, cfg.format)
    } else {
        let at: Vec<String> = round
            .sites
            .iter()
            .map(|s| format!("{}:{} ({:.2})", s.path, s.line, s.score))
            .collect();
        format!("fill in the middle, one line at a time: {}", at.join(", "))
    };
    let format_used = match (cfg.format, round.sites.is_empty()) {
        (EditFormat::Infill, true) => EditFormat::Lines,
        (f, _) => f,
    };
    traj.event(
        "candidates_prompt",
        &serde_json::json!({
            "attempt": r.attempt,
            "format": format_used.as_str(),
            "fallback": fallback,
            "system": SYSTEM,
            "prompt": user,
            "localization": problem.localization,
            "localization_ms": problem.localization_ms,
            "overlap_checks": overlap,
            "ranked": problem.ranked.iter().take(8).map(|r| serde_json::json!({
                "at": format!("{}:{}", r.loc.path, r.loc.start),
                "name": r.loc.name,
                "score": (r.score() * 1000.0).round() / 1000.0,
                "hot": r.hot(),
            })).collect::<Vec<_>>(),
        }),
    );
    round.history = vec![Message::system(SYSTEM), Message::user(user)];
    (first, queue)
}

/// The model's turn of one round.
struct Drawing<'r, 'a> {
    r: &'r Run<'a>,
    round: &'r Round<'a>,
    against: Against<'a>,
    /// Whether the checks run while the model writes the next reply ([`overlap_checks`]).
    overlap: bool,
}

impl Drawing<'_, '_> {
    /// Ask the queue's draws in order and check each reply as it comes; after each check the
    /// sources' follow-ups go first in the queue ([`sources::after`]). It stops when enough is
    /// drawn ([`drawn_enough`]), the queue runs out, the ledger's cap is reached or the
    /// container fails. `first`: the reply to a draw asked before the others.
    ///
    /// Replies stream in (up to `parallel` in flight). With `overlap`, earlier ones are
    /// checked meanwhile: the container's test runs overlap the model's next generation.
    /// Without it, a request waits for the checks of the replies before it (a model on this
    /// machine would share its CPUs with them: both slower, and its time per fill inflated).
    async fn draw(
        &self,
        first: Option<Asked>,
        queue: VecDeque<Draw>,
        traj: &mut Trajectory,
        seen: &mut BTreeSet<Vec<(String, String)>>,
        out: &mut CandidatesOutcome,
    ) {
        let (round, overlap) = (self.round, self.overlap);
        // Every model call of the round goes through the ledger: asked first, charged after.
        let ledger = self.r.model.ledger();
        let k = round.config.count.max(1);
        let parallel = round.config.parallel.max(1);
        let infill = !round.sites.is_empty();
        let draws = queue.len() + usize::from(first.is_some());
        // The model's candidates are numbered after the ones handed over before.
        let offset = round.offset + out.candidates.len();
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
        let turns = tokio::sync::Semaphore::new(if overlap {
            tokio::sync::Semaphore::MAX_PERMITS
        } else {
            parallel
        });
        let turns = &turns;
        let from = usize::from(first.is_some());
        if let Some(item) = first {
            if !overlap {
                // Its check comes first; its turn is given back after it.
                turns.forget_permits(1);
            }
            let _ = tx.send(item);
        }
        let queue = std::sync::Mutex::new(queue);
        let queue = &queue;
        let next_index = std::sync::atomic::AtomicUsize::new(from);
        let next_index = &next_index;
        let produce = async move {
            // The ledger is asked before each request: a slot frees, the next one is asked for.
            let mut replies = futures_util::stream::iter(from..)
                .take_while(|_| std::future::ready(ledger.check().is_none()))
                .map(|_| async move {
                    // Closed never; an error would only mean no wait.
                    if let Ok(p) = turns.acquire().await {
                        p.forget();
                    }
                    // Taken after the turn: the follow-ups of the reply just checked come first.
                    let draw = queue.lock().ok()?.pop_front()?;
                    let i = next_index.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let t0 = Instant::now();
                    let reply = draw.by.ask(round, &draw).await;
                    Some(Asked {
                        i,
                        draw,
                        reply,
                        took: t0.elapsed(),
                    })
                })
                .buffered(parallel);
            while let Some(Some(item)) = replies.next().await {
                if tx.send(item).is_err() {
                    break;
                }
            }
        };
        let mut checked = 0;
        // Replies drawn when the first clean passing candidate came (see [`drawn_enough`]).
        let mut clean_at: Option<usize> = None;
        let consume = async {
            while let Some(asked) = rx.recv().await {
                out.model_ms += asked.took.as_millis() as u64;
                if let Err(ModelError::Budget(_)) = &asked.reply {
                    // The ledger refused the call (or its wall time ran out): no candidate,
                    // the drawing stops below on the cap.
                    if let Some(cap) = ledger.check() {
                        out.budget = Some(cap);
                    }
                    continue;
                }
                // The candidate, checked, and what the sources draw next because of it.
                let (cand, next) = self.take(asked, offset, seen, out, &mut checked).await;
                if let Ok(mut q) = queue.lock() {
                    for d in next.into_iter().rev() {
                        q.push_front(d);
                    }
                }
                record(traj, self.r, &cand);
                out.candidates.push(cand);
                if !overlap {
                    turns.add_permits(1);
                }
                if out.infrastructure.is_some() || self.enough(out, checked, &mut clean_at) {
                    break;
                }
                // A cap used up stops the requests (the producer asks the ledger first); the
                // replies already paid for are still checked.
                if out.budget.is_none()
                    && let Some(cap) = ledger.check()
                {
                    out.budget = Some(cap);
                }
            }
        };
        // The consumer decides when enough is drawn: a request still in flight then is dropped.
        {
            let mut consume = std::pin::pin!(consume);
            tokio::select! {
                biased;
                () = &mut consume => {}
                () = produce => consume.await,
            }
        }
        if out.budget.is_none()
            && let Some(cap) = ledger.check()
        {
            // The producer stopped asking: the cap came between two requests.
            out.budget = Some(cap);
        }
        if let Some(cap) = out.budget
            && out.note.is_none()
        {
            let n = out.candidates.len();
            out.note = Some(if infill {
                format!("stopped after {n} of {draws} fills ({checked} checked): {cap}")
            } else {
                format!("stopped after {checked} of {k} candidates ({n} replies): {cap}")
            });
        }
    }
}

impl Drawing<'_, '_> {
    /// Reply `i` of the turn as a candidate (numbered from `offset`), read by its source and
    /// checked (`checked` counts it), with the draws the sources put first because of it
    /// ([`sources::after`]).
    async fn take(
        &self,
        Asked {
            i,
            draw,
            reply,
            took,
        }: Asked,
        offset: usize,
        seen: &mut BTreeSet<Vec<(String, String)>>,
        out: &mut CandidatesOutcome,
        checked: &mut usize,
    ) -> (Candidate, Vec<Draw>) {
        let mut cand = Candidate::blank(offset + i, took.as_millis() as u64);
        let (text, alternatives) = match reply {
            Err(e) => {
                cand.detail = format!("the model call failed: {e}");
                if e.is_setup() {
                    out.infrastructure = Some(e.to_string());
                }
                (String::new(), Vec::new())
            }
            Ok(reply) => {
                let read = draw.by.read(self.round, &draw, &reply);
                cand.timings = reply.timings;
                cand.usage = reply.usage;
                match check_read(self.against, read, &out.candidates, seen, &mut cand).await {
                    Ok(true) => *checked += 1,
                    Ok(false) => {}
                    Err(e) => {
                        out.infrastructure = Some(format!("checking candidate {i}: {e}"));
                        cand.detail = e.to_string();
                    }
                }
                (reply.text, reply.alternatives)
            }
        };
        let done = Done {
            draw: &draw,
            status: cand.status,
            text: &text,
            alternatives: &alternatives,
        };
        let next = sources::after(self.round, &done);
        (cand, next)
    }

    /// Whether enough is drawn ([`drawn_enough`]) now that `out` has its latest candidate;
    /// `clean_at` is set when that one is the first clean pass.
    fn enough(
        &self,
        out: &CandidatesOutcome,
        checked: usize,
        clean_at: &mut Option<usize>,
    ) -> bool {
        let passing = out
            .candidates
            .iter()
            .filter(|c| c.status == Outcome::Passing)
            .count();
        if clean_at.is_none()
            && let Some(c) = out.candidates.last()
            && c.status == Outcome::Passing
            && Passing::of(c, self.round.problem).clean()
        {
            *clean_at = Some(out.candidates.len());
        }
        let (infill, k) = (!self.round.sites.is_empty(), self.round.config.count.max(1));
        drawn_enough(infill, k, checked, passing, *clean_at, out.candidates.len())
    }
}

/// Set a candidate's origin and reply from `read`, and check its edits ([`assess`]); a reply
/// that made none is `unparsed` or `not_applied`. Ok(true): it was checked. Err: the container
/// failed.
async fn check_read(
    at: Against<'_>,
    read: Read,
    earlier: &[Candidate],
    seen: &mut BTreeSet<Vec<(String, String)>>,
    cand: &mut Candidate,
) -> Result<bool, SandboxError> {
    cand.origin = read.origin;
    cand.reply = read.label;
    match read.edits {
        Err(e) => {
            cand.status = e.status();
            cand.detail = e.detail().into();
            Ok(false)
        }
        Ok(edits) => assess(at, edits, earlier, seen, cand).await,
    }
}

/// Draws after the first clean passing fill (nothing the generalisation layers flag,
/// nothing of the replaced code dropped) before the search stops: alternatives to rank it
/// against, without filling every remaining site. On the mutation bench the first passing
/// fill came at draw 0, 2 and 10 of the 18–25 a resolved task then drew.
pub const DRAWS_AFTER_CLEAN: usize = 4;

/// Whether the drawing stops: chat formats after K checked candidates; `infill` after K
/// passing ones, or [`DRAWS_AFTER_CLEAN`] draws after the first clean passing one (`clean_at`:
/// replies drawn when it came). A passing fill that looks fitted or drops what the masked
/// code used keeps the search going for the K. Pure.
pub fn drawn_enough(
    infill: bool,
    k: usize,
    checked: usize,
    passing: usize,
    clean_at: Option<usize>,
    drawn: usize,
) -> bool {
    if !infill {
        return checked >= k;
    }
    passing >= k || clean_at.is_some_and(|at| drawn >= at + DRAWS_AFTER_CLEAN)
}

/// Whether candidate checks overlap the model's next request: as configured, else unless
/// the model answers on this machine. Pure.
pub fn overlap_checks(cfg: &CandidateConfig, model: &dyn Model) -> bool {
    cfg.overlap.unwrap_or_else(|| !model.on_this_machine())
}

/// The candidate's node in the trajectory.
fn record(traj: &mut Trajectory, r: &Run<'_>, cand: &Candidate) {
    traj.node(&NodeRecord {
        id: format!("{}.c{}", r.attempt, cand.index),
        parent: Some(r.attempt.to_string()),
        node: "candidate".into(),
        tier: r.model.tier(),
        model: if cand.origin.rule().is_some() {
            "rule (no model)".into()
        } else {
            r.model.describe()
        },
        strategy: "candidates".into(),
        status: cand.status.as_str().into(),
        detail: cand.detail.clone(),
        diff: cand.diff.clone(),
        tokens: cand.usage.total(),
        model_ms: cand.model_ms,
        rollback_ms: cand.rollback_ms,
        reply: cand.reply.clone(),
        timings: cand.timings,
        origin: Some(cand.origin.clone()),
    });
}
