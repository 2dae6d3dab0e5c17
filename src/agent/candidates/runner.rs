//! Drawing the candidates, in rounds, and checking each in the container as it comes.

use std::collections::BTreeSet;
use std::time::Instant;

use futures_util::StreamExt;

use super::candidate::{Candidate, CandidatesOutcome, Passing};
use super::check::{Against, assess, write_all};
use super::edits::{FileEdit, parse_reply};
use super::infill::{
    RETRY_SAMPLE, apply_infill, continue_steps, continued_start, infill_context, infill_plan,
    infill_sites, spliced,
};
use super::prompt::{SYSTEM, prompt};
use super::propagate::span;
use super::rules::rule_edits;
use super::shapes::{self, Site};
use super::suspects::{suspects, suspects_ranked};
use super::{CandidateConfig, DRAWS_PER_CANDIDATE, EditFormat, Outcome, Problem};
use crate::agent::attempt::Metered;
use crate::agent::localize::Ranked;
use crate::agent::model::{
    Alternative, FillTimings, Infill, Message, Model, ModelError, Request, Sampling, Usage,
};
use crate::agent::origin::{Draw as DrawKind, Origin};
use crate::agent::tools::ToolConfig;
use crate::agent::trajectory::{NodeRecord, Trajectory};
use crate::sandbox::Sandbox;
use crate::verify::pysrc::parses_cleanly;

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

/// The sampling of candidate `i`: greedy first, then the temperature with seed `i + 1`.
pub fn sampling(i: usize, temperature: f64) -> Sampling {
    if i == 0 {
        Sampling {
            temperature: 0.0,
            seed: 1,
        }
    } else {
        Sampling {
            temperature,
            seed: i as u64 + 1,
        }
    }
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

/// One round of drawing: draw the candidates and check each in the run's container.
/// Candidate indices start at `offset`.
async fn round(
    r: Run<'_>,
    traj: &mut Trajectory,
    offset: usize,
    memo: &FillMemo,
) -> CandidatesOutcome {
    let Run {
        model,
        sandbox,
        problem,
        baseline_failing,
        config: cfg,
        tools: tools_cfg,
        ..
    } = r;
    // Every model call of the round goes through the ledger: asked first, charged after.
    let ledger = model.ledger();
    let model: &dyn Model = model;
    let started = Instant::now();
    let mut out = CandidatesOutcome::default();
    let sus = if problem.ranked.is_empty() {
        suspects(&problem.context.focus.code, &problem.files)
    } else {
        suspects_ranked(&problem.ranked, &problem.context.focus.code, &problem.files)
    };
    if sus.is_empty() {
        out.note = Some(
            "no function to rewrite: the failing-code context located no code under test".into(),
        );
        out.wall = started.elapsed();
        return out;
    }
    let against = Against {
        sandbox,
        problem,
        baseline_failing,
        tools: tools_cfg,
    };
    let mut seen: BTreeSet<Vec<(String, String)>> = BTreeSet::new();
    // Rule-based candidates first, in the first round of the first tier (they need no model:
    // an escalated tier would only check them again): they cost no model time, and a clean
    // pass among them leaves nothing to draw.
    if offset == 0
        && r.model.tier() == 0
        && rules_first(&r, against, traj, &mut seen, &mut out, offset).await
    {
        out.note = Some("a rule-based candidate passed: no fill drawn".into());
        out.wall = started.elapsed();
        return out;
    }
    if out.infrastructure.is_some() {
        out.wall = started.elapsed();
        return out;
    }
    let offset = offset + out.candidates.len();
    // Fill-in-the-middle on the most suspicious lines when the model has it and the fault
    // localization scored lines; else the chat prompt (`infill`'s fallback is `lines`).
    let mut sites = if cfg.format == EditFormat::Infill && model.supports_infill() {
        infill_sites(&problem.ranked, &problem.files, &cfg.shapes)
    } else {
        Vec::new()
    };
    // The first infill is asked here: a server that refuses fill-in-the-middle (an Ollama
    // model whose template has no suffix, a server that strips the special tokens) leaves the
    // chat prompt, not a row of errors.
    let mut first = None;
    let mut fallback = None;
    if let Some(site) = sites.first().filter(|_| ledger.check().is_none()) {
        let t0 = Instant::now();
        match infill_at(model, problem, site, sampling(0, cfg.temperature), "", memo).await {
            Err(e @ (ModelError::Rejected { .. } | ModelError::Unsupported(_))) => {
                tracing::warn!("fill-in-the-middle refused, asking for lines instead: {e}");
                fallback = Some(format!("fill-in-the-middle refused: {e}"));
                sites.clear();
            }
            r => first = Some((0, Draw::new(0, 0), r, t0.elapsed())),
        }
    }
    let user = if sites.is_empty() {
        prompt(problem, &sus, cfg.format)
    } else {
        let at: Vec<String> = sites
            .iter()
            .map(|s| format!("{}:{} ({:.2})", s.path, s.line, s.score))
            .collect();
        format!("fill in the middle, one line at a time: {}", at.join(", "))
    };
    let format_used = match (cfg.format, sites.is_empty()) {
        (EditFormat::Infill, true) => EditFormat::Lines,
        (f, _) => f,
    };
    let overlap = overlap_checks(cfg, model);
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
    let history = vec![Message::system(SYSTEM), Message::user(user)];
    let k = cfg.count.max(1);
    // Infill: each site greedy, then the best ones sampled. Chat: K samples, redrawn up to 2K.
    let plan = infill_plan(&sites);
    let draws = if sites.is_empty() {
        k * DRAWS_PER_CANDIDATE
    } else {
        plan.len()
    };
    let parallel = cfg.parallel.max(1);

    // Replies stream in (up to `parallel` in flight). With `overlap`, earlier ones are
    // checked meanwhile: the container's test runs overlap the model's next generation.
    // Without it, a request waits for the checks of the replies before it (a model on this
    // machine would share its CPUs with them: both slower, and its time per fill inflated).
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let turns = tokio::sync::Semaphore::new(if overlap {
        tokio::sync::Semaphore::MAX_PERMITS
    } else {
        parallel
    });
    let history = &history;
    let sites = &sites;
    let plan = &plan;
    let turns = &turns;
    let from = usize::from(first.is_some());
    if let Some(item) = first {
        if !overlap {
            // Its check comes first; its turn is given back after it.
            turns.forget_permits(1);
        }
        let _ = tx.send(item);
    }
    // The draws still to make, in order, as (site, sample) (chat: the sample alone). A greedy
    // fill that gives the masked code back, or nothing, gets one sampled retry of its site
    // next: its prompt is in the server's cache, so it costs only the generation.
    let queue: std::sync::Mutex<std::collections::VecDeque<Draw>> =
        std::sync::Mutex::new(if sites.is_empty() {
            (from..draws).map(|i| Draw::new(0, i)).collect()
        } else {
            plan[from.min(plan.len())..]
                .iter()
                .map(|&(at, sample)| Draw::new(at, sample))
                .collect()
        });
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
                // Taken after the turn: the retry of the reply just checked comes first.
                let draw = queue.lock().ok()?.pop_front()?;
                let i = next_index.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let t0 = Instant::now();
                let r = if let Some(line) = &draw.splice {
                    Ok(Reply {
                        text: line.clone(),
                        usage: Usage::default(),
                        timings: None,
                        alternatives: Vec::new(),
                        reused: false,
                    })
                } else if sites.is_empty() {
                    model
                        .complete(&Request {
                            messages: history,
                            tools: &[],
                            sample: Some(sampling(draw.sample, cfg.temperature)),
                        })
                        .await
                        .map(|r| Reply {
                            text: r.message.content,
                            usage: r.usage,
                            timings: None,
                            alternatives: Vec::new(),
                            reused: false,
                        })
                } else {
                    let middle = draw.middle.as_deref().unwrap_or("");
                    infill_at(
                        model,
                        problem,
                        &sites[draw.at],
                        sampling(draw.sample, cfg.temperature),
                        middle,
                        memo,
                    )
                    .await
                    .map(|f| {
                        let mut r = f;
                        r.text.insert_str(0, middle);
                        r
                    })
                };
                Some((i, draw, r, t0.elapsed()))
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
        while let Some((i, draw, reply, took)) = rx.recv().await {
            let at = draw.at;
            let model_ms = took.as_millis() as u64;
            out.model_ms += model_ms;
            let mut reply_text = String::new();
            let mut branch_at = None;
            let mut continue_at = None;
            let mut splices = Vec::new();
            let mut cand = Candidate::blank(offset + i, model_ms);
            if let Err(ModelError::Budget(_)) = &reply {
                // The ledger refused the call (or its wall time ran out): no candidate, the
                // drawing stops below on the cap.
                if let Some(cap) = ledger.check() {
                    out.budget = Some(cap);
                }
                continue;
            }
            match reply {
                Err(e) => {
                    cand.detail = format!("the model call failed: {e}");
                    if e.is_setup() {
                        out.infrastructure = Some(e.to_string());
                    }
                }
                Ok(Reply {
                    text,
                    usage,
                    timings,
                    alternatives,
                    reused,
                }) => {
                    cand.timings = timings;
                    reply_text = text.clone();
                    cand.reply = text.clone();
                    cand.origin = if sites.is_empty() {
                        Origin::Chat {
                            sample: draw.sample,
                        }
                    } else {
                        Origin::Fill {
                            at: format!("{}:{}", sites[at].path, sites[at].line),
                            shape: sites[at].shape.as_str().into(),
                            draw: if draw.splice.is_some() {
                                DrawKind::Spliced
                            } else if draw.continued > 0 {
                                DrawKind::Continued
                            } else if draw.middle.is_some() {
                                DrawKind::RunnerUp
                            } else if reused {
                                DrawKind::Reused
                            } else if draw.sample > 0 {
                                DrawKind::Sampled
                            } else {
                                DrawKind::Greedy
                            },
                        }
                    };
                    cand.usage = usage;
                    let parsed = if sites.is_empty() {
                        parse_reply(&text, &sus, &problem.files)
                    } else {
                        let site = &sites[at];
                        // A branch says so: its fill is the model's runner-up, not a sample.
                        let how = match (draw.middle.is_some(), reused) {
                            _ if draw.splice.is_some() => " (spliced)",
                            _ if draw.continued > 0 && reused => " (continued, reused)",
                            _ if draw.continued > 0 => " (continued)",
                            (true, false) => " (runner-up)",
                            (true, true) => " (runner-up, reused)",
                            // The same request earlier in this run: its answer again.
                            (false, true) => " (reused)",
                            (false, false) => "",
                        };
                        reply_text = format!("{}{how} ← {text}", site.label());
                        branch_at = branch(&text, &alternatives);
                        let masked = problem
                            .files
                            .get(&site.path)
                            .zip(site.line.checked_sub(1))
                            .and_then(|(src, i)| src.lines().nth(i));
                        continue_at = masked.and_then(|m| continued_start(m, &text));
                        if draw.splice.is_none() && shapes::of(site.shape).one_line() {
                            splices = masked.map(|m| spliced(m, &text)).unwrap_or_default();
                            if !splices.is_empty() {
                                splices.retain(parses_at(site, &problem.files));
                            }
                        }
                        cand.reply = reply_text.clone();
                        apply_infill(&text, site, &problem.files).map(|e| vec![e])
                    };
                    match parsed {
                        Err(e) => {
                            cand.status = e.status();
                            cand.detail = e.detail().into();
                        }
                        Ok(edits) => {
                            match assess(against, edits, &out.candidates, &mut seen, &mut cand)
                                .await
                            {
                                Ok(true) => checked += 1,
                                Ok(false) => {}
                                Err(e) => {
                                    out.infrastructure =
                                        Some(format!("checking candidate {i}: {e}"));
                                    cand.detail = e.to_string();
                                }
                            }
                        }
                    }
                }
            }
            // A greedy fill that gave the masked code back, or nothing, is retried at once:
            // from the model's most likely token it did not take, else sampled.
            if !sites.is_empty()
                && draw.sample == 0
                && draw.middle.is_none()
                && draw.splice.is_none()
                && matches!(cand.status, Outcome::NotApplied | Outcome::Unparsed)
                && let Ok(mut q) = queue.lock()
            {
                q.push_front(match branch_at {
                    Some(middle) => Draw {
                        middle: Some(middle),
                        ..Draw::new(at, 0)
                    },
                    None => Draw::new(at, RETRY_SAMPLE),
                });
            }
            // A greedy one-line fill that departs from the masked line and fails is
            // continued at once from the masked line's own text through the token where it
            // departed (its prompt is in the server's cache: only the start and the rest of
            // the line are evaluated), and again from where that departs, along the line
            // ([`continue_steps`]). A passing one too: each step keeps more of the line, and
            // a later step that passes is the more faithful fix (it ranks first).
            let departs = matches!(
                cand.status,
                Outcome::Failing | Outcome::Partial | Outcome::Duplicate | Outcome::Passing
            );
            if !sites.is_empty()
                && shapes::of(sites[at].shape).one_line()
                && draw.sample == 0
                && draw.splice.is_none()
                && (draw.middle.is_none() || draw.continued > 0)
                && draw.continued < continue_steps(at)
                && departs
                && let Some(start) = continue_at
                && let Ok(mut q) = queue.lock()
            {
                q.push_front(Draw {
                    middle: Some(start),
                    continued: draw.continued + 1,
                    ..Draw::new(at, 0)
                });
            }
            // Its one-token splices into the masked line ([`spliced`]) come first: no model
            // time, one check each, and the smallest edits that take the model's point.
            if departs
                && draw.sample == 0
                && let Ok(mut q) = queue.lock()
            {
                for line in splices.into_iter().rev() {
                    q.push_front(Draw {
                        splice: Some(line),
                        ..Draw::new(at, 0)
                    });
                }
            }
            record(traj, &r, &cand, reply_text);
            out.candidates.push(cand);
            if !overlap {
                turns.add_permits(1);
            }
            if out.infrastructure.is_some() {
                break;
            }
            let passing = out
                .candidates
                .iter()
                .filter(|c| c.status == Outcome::Passing)
                .count();
            if clean_at.is_none()
                && let Some(c) = out.candidates.last()
                && c.status == Outcome::Passing
                && Passing::of(c, problem).clean()
            {
                clean_at = Some(out.candidates.len());
            }
            let infill = !sites.is_empty();
            if drawn_enough(infill, k, checked, passing, clean_at, out.candidates.len()) {
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
        out.note = Some(if sites.is_empty() {
            format!("stopped after {checked} of {k} candidates ({n} replies): {cap}")
        } else {
            format!("stopped after {n} of {draws} fills ({checked} checked): {cap}")
        });
    }
    out.candidates.sort_by_key(|c| c.index);
    out.wall = started.elapsed();
    out
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

/// One draw still to make: its site, its sample (0: greedy, see [`sampling`]), and the start
/// its fill continues from when it is a branch of an earlier fill.
#[derive(Debug, Clone)]
struct Draw {
    at: usize,
    sample: usize,
    middle: Option<String>,
    /// Which continuation of a departing greedy fill this is ([`continued_start`]); 0: none.
    continued: usize,
    /// A line spliced from a fill ([`spliced`]): checked as it is, no model asked.
    splice: Option<String>,
}

impl Draw {
    fn new(at: usize, sample: usize) -> Self {
        Draw {
            at,
            sample,
            middle: None,
            continued: 0,
            splice: None,
        }
    }
}

/// A reply as the consumer needs it, from a chat completion or a fill.
struct Reply {
    text: String,
    usage: Usage,
    timings: Option<FillTimings>,
    alternatives: Vec<Alternative>,
    /// Answered from the run's [`FillMemo`], not asked of the model.
    reused: bool,
}

impl From<crate::agent::model::Filled> for Reply {
    fn from(f: crate::agent::model::Filled) -> Self {
        Reply {
            text: f.text,
            usage: f.usage,
            timings: f.timings,
            alternatives: f.alternatives,
            reused: false,
        }
    }
}

/// Whether a line in place of `site`'s masked line leaves its file parsing as it did: a
/// splice that breaks the syntax is not worth a test run. The file as it is is parsed once.
fn parses_at<'a>(
    site: &'a Site,
    files: &'a std::collections::BTreeMap<String, String>,
) -> impl FnMut(&String) -> bool + 'a {
    let broken_before = files.get(&site.path).map(|f| !parses_cleanly(f));
    move |line| match (broken_before, apply_infill(line, site, files)) {
        (Some(broken), Ok(edit)) => broken || parses_cleanly(&edit.content),
        _ => false,
    }
}

/// Runner-up tokens asked for per generated position of a greedy fill.
const ALTERNATIVES: u8 = 5;

/// Where to branch a fill that gave the masked code back: the most likely token the model
/// did not take whose start is not the fill's own start give or take whitespace (`" a"` for
/// `"a"` is the same line), nor a comment or a docstring (that deletes the line's code: 6 of
/// the first 58 branches on the mutation bench). The returned text is the branch's known
/// start. Pure.
pub fn branch(fill: &str, alternatives: &[Alternative]) -> Option<String> {
    let squeeze = |s: &str| s.split_whitespace().collect::<String>();
    let fill = squeeze(fill);
    alternatives
        .iter()
        .filter(|a| !a.token.contains('\n') && !a.token.trim().is_empty())
        .map(|a| format!("{}{}", a.before, a.token))
        .filter(|start| !start.trim_start().starts_with(['#', '"', '\'']))
        .find(|start| !fill.starts_with(&squeeze(start)))
}

/// Fills already answered in this run, by their request. A later round asks again at every
/// site, and a site whose prompt window does not reach the kept edit gets the same prompt,
/// seed and temperature: the answer would be the same (greedy, or seeded), so it is reused
/// and only the combination with the kept edit is new. On the mutation bench 55 of the 68
/// later-round draws repeated an earlier reply (91 model-s).
#[derive(Default)]
struct FillMemo(std::sync::Mutex<std::collections::HashMap<String, crate::agent::model::Filled>>);

impl FillMemo {
    fn key(i: &Infill<'_>) -> String {
        let s = i.sample.map(|s| (s.temperature.to_bits(), s.seed));
        // The parts joined by a byte no source text or stop string holds.
        format!(
            "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{:?}\u{0}{}\u{0}{}",
            i.prefix,
            i.suffix,
            i.middle,
            i.stop.join("\u{1}"),
            s,
            i.max_tokens,
            i.alternatives
        )
    }

    fn get(&self, i: &Infill<'_>) -> Option<Reply> {
        let hit = self.0.lock().ok()?.get(&Self::key(i)).cloned()?;
        // Nothing was asked of the model: no tokens, no server time.
        Some(Reply {
            text: hit.text,
            usage: Usage::default(),
            timings: None,
            alternatives: hit.alternatives,
            reused: true,
        })
    }

    fn put(&self, i: &Infill<'_>, f: &crate::agent::model::Filled) {
        if let Ok(mut m) = self.0.lock() {
            m.insert(Self::key(i), f.clone());
        }
    }
}

/// One fill-in-the-middle request for `site`; `middle`: the start its fill continues. The
/// same request a second time is answered from `memo`.
async fn infill_at(
    model: &dyn Model,
    problem: &Problem,
    site: &Site,
    sample: Sampling,
    middle: &str,
    memo: &FillMemo,
) -> Result<Reply, ModelError> {
    let src = problem.files.get(&site.path).map_or("", String::as_str);
    let (prefix, suffix) = infill_context(src, site);
    let (stop, max_tokens) = site.limits(src);
    let stop: Vec<&str> = stop.iter().map(String::as_str).collect();
    let request = Infill {
        prefix: &prefix,
        suffix: &suffix,
        stop: &stop,
        max_tokens,
        sample: Some(sample),
        middle,
        // Only a greedy fill is branched.
        alternatives: if sample.temperature == 0.0 && middle.is_empty() {
            ALTERNATIVES
        } else {
            0
        },
    };
    if let Some(hit) = memo.get(&request) {
        return Ok(hit);
    }
    let filled = model.infill(&request).await?;
    memo.put(&request, &filled);
    Ok(Reply::from(filled))
}

/// The candidate's node in the trajectory.
fn record(traj: &mut Trajectory, r: &Run<'_>, cand: &Candidate, reply: String) {
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
        reply,
        timings: cand.timings,
        origin: Some(cand.origin.clone()),
    });
}

/// The rule-based candidates ([`rule_edits`]), checked before any fill is drawn; they stop at
/// the first clean pass (the caller then draws nothing) or a container failure. true: one
/// passed clean.
async fn rules_first(
    r: &Run<'_>,
    at: Against<'_>,
    traj: &mut Trajectory,
    seen: &mut BTreeSet<Vec<(String, String)>>,
    out: &mut CandidatesOutcome,
    offset: usize,
) -> bool {
    for rule in rule_edits(at.problem) {
        let mut cand = Candidate::blank(offset + out.candidates.len(), 0);
        cand.reply = format!("rule {}: {}", rule.rule, rule.what);
        cand.origin = Origin::Rule {
            rule: rule.rule.to_string(),
        };
        if let Err(e) = assess(at, rule.edits, &out.candidates, seen, &mut cand).await {
            out.infrastructure = Some(format!("checking rule candidate {}: {e}", cand.index));
            cand.detail = e.to_string();
        }
        let reply = cand.reply.clone();
        record(traj, r, &cand, reply);
        let clean = cand.status == Outcome::Passing && Passing::of(&cand, at.problem).clean();
        out.candidates.push(cand);
        if clean || out.infrastructure.is_some() {
            return clean;
        }
    }
    false
}

#[cfg(test)]
mod memo_tests {
    use super::*;
    use crate::agent::candidates::InfillShape;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Answers every fill with the number of the call, and counts the calls.
    struct Numbered(AtomicUsize);

    #[async_trait::async_trait]
    impl Model for Numbered {
        async fn complete(
            &self,
            _req: &Request<'_>,
        ) -> Result<crate::agent::model::Response, ModelError> {
            Err(ModelError::Unsupported("fills only".into()))
        }
        fn spec(&self) -> String {
            "test:numbered".into()
        }
        fn describe(&self) -> String {
            self.spec()
        }
        fn supports_infill(&self) -> bool {
            true
        }
        async fn infill(
            &self,
            _req: &Infill<'_>,
        ) -> Result<crate::agent::model::Filled, ModelError> {
            let n = self.0.fetch_add(1, Ordering::SeqCst);
            Ok(crate::agent::model::Filled {
                text: format!("    return {n}"),
                usage: Usage {
                    prompt_tokens: 10,
                    completion_tokens: 3,
                },
                timings: None,
                alternatives: Vec::new(),
            })
        }
    }

    #[tokio::test]
    async fn the_same_fill_request_is_answered_once_and_costs_nothing_the_second_time() {
        let src = "def f(a):\n    b = a\n    return b\n";
        let problem = Problem::one_suspect("m.py", "f", src, "", (1, 3), &[3]);
        let site = |line| Site {
            path: "m.py".into(),
            line,
            end: line,
            shape: InfillShape::Line,
            func: (1, 3),
            score: 1.0,
        };
        let model = Numbered(AtomicUsize::new(0));
        let memo = FillMemo::default();
        let greedy = sampling(0, 0.8);
        let first = infill_at(&model, &problem, &site(3), greedy, "", &memo)
            .await
            .unwrap();
        let again = infill_at(&model, &problem, &site(3), greedy, "", &memo)
            .await
            .unwrap();
        assert_eq!(model.0.load(Ordering::SeqCst), 1, "asked once");
        assert_eq!(again.text, first.text);
        assert_eq!(again.usage, Usage::default(), "no tokens spent on a reuse");
        assert!(again.reused && !first.reused);
        assert_eq!(first.usage.prompt_tokens, 10);
        // Another seed, another start, another site, or another text around the gap: asked.
        infill_at(&model, &problem, &site(3), sampling(1, 0.8), "", &memo)
            .await
            .unwrap();
        infill_at(&model, &problem, &site(3), greedy, "    return", &memo)
            .await
            .unwrap();
        infill_at(&model, &problem, &site(2), greedy, "", &memo)
            .await
            .unwrap();
        let mut edited = problem.clone();
        edited
            .files
            .insert("m.py".into(), src.replace("b = a", "b = -a"));
        let other = infill_at(&model, &edited, &site(3), greedy, "", &memo)
            .await
            .unwrap();
        assert_eq!(model.0.load(Ordering::SeqCst), 5);
        assert_eq!(other.text, "    return 4");
    }
}
