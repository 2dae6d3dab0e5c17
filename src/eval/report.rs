//! `patchloop report`: a run's results as Markdown, with honest intervals, spend per resolved
//! task, the per-strategy breakdown and, for several runs on the same tasks, one A/B table with
//! the exact McNemar test of each run against the first.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::eval::hidden::HiddenCheck;
use crate::eval::results::EpisodeResult;
use crate::eval::stats::{self, McNemar, Proportion};
use crate::eval::trajectory::{self, Trajectory};

/// The numbers of one run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunSummary {
    pub run_id: String,
    pub models: Vec<String>,
    pub tasks: usize,
    pub episodes: usize,
    /// Largest number of attempts any task has.
    pub max_attempts: u64,
    /// First attempts resolved, over tasks.
    pub resolved_first: Proportion,
    /// All episodes resolved, over episodes (only differs when K > 1).
    pub resolved_all: Proportion,
    pub stop_reasons: BTreeMap<String, usize>,
    pub verdicts: BTreeMap<String, usize>,
    pub errors: usize,
    pub mean_wall_s: f64,
    pub mean_tokens: f64,
    pub mean_cost_usd: f64,
    /// (k, pass@k, pass^k) for k = 1..=K over tasks with at least K attempts.
    pub pass_k: Vec<(u64, f64, f64)>,
    /// Per task: (attempts, successes, first attempt resolved).
    pub per_task: BTreeMap<String, (u64, u64, bool)>,
    /// Where the time went, over the episodes that recorded it.
    pub time: Option<TimeSummary>,
    /// Tokens and model-server milliseconds summed over first attempts (the spend behind
    /// `resolved_first`).
    pub first_tokens: u64,
    pub first_model_ms: u64,
    /// Each strategy × model tier tried, over every episode's `attempts` (empty for runs
    /// without them), by tier then order of first appearance.
    pub strategies: Vec<StrategyRow>,
    /// First attempts the verifier verified, over tasks (`resolved_first` also needs the
    /// hidden check).
    pub verified_first: Proportion,
    /// First attempts per bench (mutation, real; `unlabelled` for older results).
    pub benches: Vec<BenchRow>,
    /// First attempts that were verified but whose hidden check failed or could not run: each
    /// one a defect to explain.
    pub hidden_failures: Vec<HiddenFailure>,
    /// Whether any result recorded a hidden-check stage (older runs did not).
    pub has_hidden_stage: bool,
    /// The funnel section (`eval::funnel::render`) over first attempts; empty for runs that
    /// recorded none.
    pub funnel: String,
    /// Wall time around the model per resolved task ([`resolved_time_section`]); empty when
    /// nothing was resolved or no timings were recorded.
    pub resolved_time: String,
}

/// One bench's first attempts.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct BenchRow {
    pub bench: String,
    pub tasks: usize,
    pub verified: usize,
    /// Verified and the hidden check passed (or the task has none).
    pub resolved: usize,
    /// Verified, but the hidden check failed.
    pub hidden_failed: usize,
    /// Verified, but the hidden check could not run.
    pub hidden_error: usize,
    /// Tasks without a hidden check.
    pub no_check: usize,
}

/// A verified patch the hidden check did not accept.
#[derive(Debug, Clone, PartialEq)]
pub struct HiddenFailure {
    pub instance_id: String,
    pub bench: String,
    pub status: HiddenCheck,
    pub detail: Option<String>,
}

impl RunSummary {
    /// Tokens spent per resolved task (first attempts); `None` when none resolved.
    pub fn tokens_per_resolved(&self) -> Option<f64> {
        let n = self.resolved_first.successes;
        (n > 0).then(|| self.first_tokens as f64 / n as f64)
    }
    /// Model-server seconds per resolved task (first attempts); `None` when none resolved.
    pub fn model_s_per_resolved(&self) -> Option<f64> {
        let n = self.resolved_first.successes;
        (n > 0).then(|| self.first_model_ms as f64 / 1000.0 / n as f64)
    }
}

/// One strategy on one model tier, summed over the run's episodes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct StrategyRow {
    pub tier: usize,
    pub strategy: crate::config::repair::Strategy,
    pub models: Vec<String>,
    pub attempts: usize,
    /// Attempts whose result is `verified`.
    pub verified: usize,
    pub tokens: u64,
    pub model_ms: u64,
    /// The attempts' wall time (model, candidate checks, tools; not verification).
    pub wall_ms: u64,
    pub candidates: usize,
    pub passing: usize,
}

/// Model-server time of one episode: the result's own `model_ms`, or (older results, which
/// have 0) what its trajectory recorded.
pub fn episode_model_ms(r: &EpisodeResult, t: Option<&Trajectory>) -> u64 {
    if r.model_ms > 0 {
        r.model_ms
    } else {
        t.map(trajectory::model_ms).unwrap_or(0)
    }
}

/// Sums over episodes, seconds. The ratio `wall / tests` is the harness's cost relative to
/// the test runs verification must pay anyway; `overhead_per_episode` is the same in seconds.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TimeSummary {
    pub episodes: usize,
    pub wall: f64,
    pub tests: f64,
    pub prepare: f64,
    pub episode: f64,
    pub verify: f64,
    /// The median over episodes whose verification ran tests of verification's wall time /
    /// its own test runs (issue #44's overhead measure).
    pub verify_over_tests: Option<f64>,
}

impl TimeSummary {
    pub fn ratio(&self) -> f64 {
        self.wall / self.tests.max(1e-9)
    }
    pub fn overhead_per_episode(&self) -> f64 {
        (self.wall - self.tests) / self.episodes.max(1) as f64
    }
}

pub fn summarize(run_id: &str, results: &[EpisodeResult]) -> RunSummary {
    let mut per_task: BTreeMap<String, (u64, u64, bool)> = BTreeMap::new();
    let mut stop_reasons = BTreeMap::new();
    let mut verdicts = BTreeMap::new();
    let mut models: Vec<String> = Vec::new();
    let (mut wall, mut tokens, mut cost) = (0.0, 0.0, 0.0);
    let mut errors = 0;
    let mut time = TimeSummary::default();
    let mut verify_ratios = Vec::new();
    let (mut first_tokens, mut first_model_ms) = (0u64, 0u64);
    let mut strategies: Vec<StrategyRow> = Vec::new();
    let mut benches: BTreeMap<String, BenchRow> = BTreeMap::new();
    let mut hidden_failures = Vec::new();
    let mut verified_first = 0u64;
    for r in results {
        if r.attempt == 0 {
            first_tokens += r.total_tokens;
            first_model_ms += r.model_ms;
            let bench = r.origin.map_or("unlabelled", |o| o.as_str()).to_string();
            let row = benches.entry(bench.clone()).or_insert_with(|| BenchRow {
                bench: bench.clone(),
                ..BenchRow::default()
            });
            row.tasks += 1;
            row.no_check += usize::from(r.hidden_check == Some(HiddenCheck::None));
            if r.verified() {
                verified_first += 1;
                row.verified += 1;
                if let Some(h @ (HiddenCheck::Failed | HiddenCheck::Error)) = r.hidden_check {
                    if h == HiddenCheck::Failed {
                        row.hidden_failed += 1;
                    } else {
                        row.hidden_error += 1;
                    }
                    hidden_failures.push(HiddenFailure {
                        instance_id: r.instance_id.clone(),
                        bench,
                        status: h,
                        detail: r.hidden_check_detail.clone(),
                    });
                }
            }
            row.resolved += usize::from(r.resolved);
        }
        for a in &r.attempts {
            let at = match strategies
                .iter()
                .position(|row| row.tier == a.tier && row.strategy == a.strategy)
            {
                Some(at) => at,
                None => {
                    strategies.push(StrategyRow {
                        tier: a.tier,
                        strategy: a.strategy,
                        ..StrategyRow::default()
                    });
                    strategies.len() - 1
                }
            };
            let row = &mut strategies[at];
            if !row.models.contains(&a.model) {
                row.models.push(a.model.clone());
            }
            row.attempts += 1;
            if a.result == crate::verify::attempts::Outcome::VERIFIED {
                row.verified += 1;
            }
            row.tokens += a.tokens;
            row.model_ms += a.model_ms;
            row.wall_ms += a.wall_ms;
            row.candidates += a.candidates;
            row.passing += a.passing;
        }
        if let Some(t) = &r.timings {
            if t.tests_ms > 0 {
                verify_ratios.push(t.verify_ms as f64 / t.tests_ms as f64);
            }
            time.episodes += 1;
            time.wall += r.wall_ms as f64 / 1000.0;
            time.tests += t.tests_ms as f64 / 1000.0;
            time.prepare += t.prepare_ms as f64 / 1000.0;
            time.episode += t.episode_ms as f64 / 1000.0;
            time.verify += t.verify_ms as f64 / 1000.0;
        }
        let e = per_task
            .entry(r.instance_id.clone())
            .or_insert((0, 0, false));
        e.0 += 1;
        if r.resolved {
            e.1 += 1;
        }
        if r.attempt == 0 {
            e.2 = r.resolved;
        }
        *stop_reasons.entry(r.stop_reason.clone()).or_insert(0) += 1;
        // An episode that ended without a patch is judged too (its verdict is `policy`):
        // counted apart, so the table does not read as patches the policy rejected.
        let verdict = if r.patch.trim().is_empty() && r.error.is_none() {
            "policy (no patch)".to_string()
        } else {
            r.verdict.as_str().to_string()
        };
        *verdicts.entry(verdict).or_insert(0) += 1;
        if !models.contains(&r.model) {
            models.push(r.model.clone());
        }
        if r.error.is_some() {
            errors += 1;
        }
        wall += r.wall_ms as f64 / 1000.0;
        tokens += r.total_tokens as f64;
        cost += r.cost_usd;
    }
    let n = results.len().max(1) as f64;
    let n_tasks = per_task.len() as u64;
    let max_attempts = per_task.values().map(|t| t.0).max().unwrap_or(0);
    let first = per_task.values().filter(|t| t.2).count() as u64;
    let all = results.iter().filter(|r| r.resolved).count() as u64;
    let mut pass_k = Vec::new();
    if max_attempts > 1 {
        let full: Vec<(u64, u64)> = per_task
            .values()
            .filter(|t| t.0 >= max_attempts)
            .map(|t| (t.0, t.1))
            .collect();
        for k in 1..=max_attempts {
            if let (Some(at), Some(hat)) = (
                stats::mean_over_tasks(&full, k, stats::pass_at_k),
                stats::mean_over_tasks(&full, k, stats::pass_hat_k),
            ) {
                pass_k.push((k, at, hat));
            }
        }
    }
    RunSummary {
        run_id: run_id.to_string(),
        models,
        tasks: per_task.len(),
        episodes: results.len(),
        max_attempts,
        resolved_first: stats::wilson95(first, per_task.len() as u64),
        resolved_all: stats::wilson95(all, results.len() as u64),
        stop_reasons,
        verdicts,
        errors,
        mean_wall_s: wall / n,
        mean_tokens: tokens / n,
        mean_cost_usd: cost / n,
        pass_k,
        per_task,
        time: (time.episodes > 0).then_some(TimeSummary {
            verify_over_tests: stats::median(verify_ratios),
            ..time
        }),
        first_tokens,
        first_model_ms,
        strategies: {
            // stable: strategies of one tier keep the order they were first tried in
            strategies.sort_by_key(|row| row.tier);
            strategies
        },
        verified_first: stats::wilson95(verified_first, n_tasks),
        benches: benches.into_values().collect(),
        hidden_failures,
        has_hidden_stage: results.iter().any(|r| r.hidden_check.is_some()),
        funnel: funnel_section(results),
        resolved_time: resolved_time_section(results),
    }
}

/// Per resolved first attempt: its wall time against what it could not do without (the
/// model's time and the test runs its verification needs), and where the rest went:
/// prepare, localization, the search around the model (candidate checks, tools, stages'
/// bookkeeping) and verification besides its test runs. Pure.
pub fn resolved_time_section(results: &[EpisodeResult]) -> String {
    struct Row<'a> {
        id: &'a str,
        wall: f64,
        model: f64,
        tests: f64,
        prepare: f64,
        localization: f64,
        search: f64,
        verify_rest: f64,
    }
    let s_of = |ms: u64| ms as f64 / 1000.0;
    let rows: Vec<Row> = results
        .iter()
        .filter(|r| r.attempt == 0 && r.resolved)
        .filter_map(|r| {
            let t = r.timings?;
            let localization = s_of(r.funnel.as_ref().map_or(0, |f| f.localization_ms));
            let model = s_of(r.model_ms);
            let wall = s_of(r.wall_ms);
            Some(Row {
                id: &r.instance_id,
                wall,
                model,
                tests: s_of(t.tests_ms),
                prepare: s_of(t.prepare_ms),
                localization,
                search: (s_of(t.episode_ms) - model - localization).max(0.0),
                verify_rest: (s_of(t.verify_ms) - s_of(t.tests_ms)).max(0.0),
            })
        })
        .collect();
    if rows.is_empty() {
        return String::new();
    }
    let ratio = |r: &Row| r.wall / (r.model + r.tests).max(0.001);
    let mut ratios: Vec<f64> = rows.iter().map(ratio).collect();
    ratios.sort_by(|a, b| a.partial_cmp(b).unwrap_or(std::cmp::Ordering::Equal));
    let median = ratios[ratios.len() / 2];
    let mut s = format!(
        "\n## Wall time per resolved task ({} tasks)\n\nMedian wall / (model time + verification's test runs): **{median:.2}x**. The search is the candidate checks, tools and the stages' bookkeeping around the model.\n\n| task | wall | model | verification tests | ratio | prepare | localization | search around the model | verification besides tests |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        rows.len()
    );
    for r in &rows {
        let _ = writeln!(
            s,
            "| {} | {:.1} s | {:.1} s | {:.1} s | {:.2}x | {:.1} s | {:.1} s | {:.1} s | {:.1} s |",
            r.id,
            r.wall,
            r.model,
            r.tests,
            ratio(r),
            r.prepare,
            r.localization,
            r.search,
            r.verify_rest
        );
    }
    s
}

/// The funnel over first attempts ([`crate::eval::funnel`]).
fn funnel_section(results: &[EpisodeResult]) -> String {
    use crate::eval::funnel::{Outcome, Row, render};
    let rows: Vec<Row> = results
        .iter()
        .filter(|r| r.attempt == 0)
        .map(|r| Row {
            instance_id: &r.instance_id,
            outcome: Outcome {
                funnel: r.funnel.as_ref(),
                error: r.error.as_deref(),
                verified: r.verified(),
                hidden_passed: r.hidden_check.is_none_or(|h| h.allows_resolved()),
            },
            ms: [
                r.timings.map(|t| t.prepare_ms).filter(|&p| p > 0),
                r.funnel.as_ref().map(|f| f.localization_ms),
                r.timings.map(|t| t.episode_ms),
                r.timings.map(|t| t.verify_ms),
            ],
        })
        .collect();
    render(&rows)
}

/// McNemar on the first attempts of the tasks both runs have.
pub fn compare(a: &RunSummary, b: &RunSummary) -> (McNemar, usize) {
    let mut pairs = Vec::new();
    for (id, ta) in &a.per_task {
        if let Some(tb) = b.per_task.get(id) {
            pairs.push((ta.2, tb.2));
        }
    }
    let shared = pairs.len();
    (stats::mcnemar_pairs(pairs), shared)
}

/// One row of the A/B table.
#[derive(Debug, Clone, PartialEq)]
pub struct Arm {
    pub run_id: String,
    pub models: Vec<String>,
    pub resolved: Proportion,
    pub tokens_per_resolved: Option<f64>,
    pub model_s_per_resolved: Option<f64>,
    /// Exact McNemar against the first run on the tasks both have, and how many that is
    /// (`None` for the first run itself).
    pub vs_first: Option<(McNemar, usize)>,
}

/// The A/B table's rows: every run, each compared (paired, first attempts) with the first.
pub fn arms(runs: &[&RunSummary]) -> Vec<Arm> {
    runs.iter()
        .enumerate()
        .map(|(i, r)| Arm {
            run_id: r.run_id.clone(),
            models: r.models.clone(),
            resolved: r.resolved_first,
            tokens_per_resolved: r.tokens_per_resolved(),
            model_s_per_resolved: r.model_s_per_resolved(),
            vs_first: (i > 0).then(|| compare(runs[0], r)),
        })
        .collect()
}

fn or_dash(v: Option<f64>, f: impl Fn(f64) -> String) -> String {
    v.map(f).unwrap_or_else(|| "—".to_string())
}

fn pct(p: f64) -> String {
    format!("{:.1}%", p * 100.0)
}

fn interval(p: &Proportion) -> String {
    format!(
        "{}/{} = **{}** (95% Wilson interval {} – {})",
        p.successes,
        p.trials,
        pct(p.rate),
        pct(p.low),
        pct(p.high)
    )
}

/// The report of run `a`; with `vs` runs, also the A/B table of `a` and them (McNemar against
/// `a`) and, per run, the McNemar counts in words.
pub fn render_markdown(a: &RunSummary, vs: &[RunSummary]) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# patchloop run `{}`\n", a.run_id);
    let _ = writeln!(
        s,
        "Model: {} · tasks: {} · episodes: {} · attempts per task: {}\n",
        if a.models.is_empty() {
            "-".to_string()
        } else {
            a.models.join(", ")
        },
        a.tasks,
        a.episodes,
        a.max_attempts
    );
    let _ = writeln!(
        s,
        "Resolved (first attempt): {}",
        interval(&a.resolved_first)
    );
    if a.has_hidden_stage {
        let _ = writeln!(
            s,
            "\nVerified (first attempt): {}\n\nResolved = verified and the task's hidden check passed (inputs the task's tests do not use; a task without a check needs the verdict only).",
            interval(&a.verified_first)
        );
    }
    if a.max_attempts > 1 {
        let _ = writeln!(
            s,
            "\nResolved (all episodes): {}",
            interval(&a.resolved_all)
        );
    }
    if a.has_hidden_stage || a.benches.iter().any(|b| b.bench != "unlabelled") {
        let _ = writeln!(s, "\n## By bench (first attempts)\n");
        s.push_str(&bench_table(&a.benches));
    }
    if !a.hidden_failures.is_empty() {
        let _ = writeln!(
            s,
            "\n## Verified but not accepted by the hidden check ({})\n\nEach is a defect to explain: the patch passed the task's tests without the behaviour the check tests.\n",
            a.hidden_failures.len()
        );
        for f in &a.hidden_failures {
            let first = f
                .detail
                .as_deref()
                .and_then(|d| d.lines().next())
                .unwrap_or("");
            let _ = writeln!(
                s,
                "- `{}` ({}, hidden check {}): {}",
                f.instance_id,
                f.bench,
                f.status.as_str(),
                first
            );
        }
    }
    if a.errors > 0 {
        let _ = writeln!(
            s,
            "\n{} episode(s) ended in a harness error (counted as not resolved).",
            a.errors
        );
    }
    s.push_str(&a.funnel);
    let _ = writeln!(s, "\n## Cost per episode (mean)\n");
    let _ = writeln!(s, "| wall time | tokens | cost |\n|---:|---:|---:|");
    let _ = writeln!(
        s,
        "| {:.1} s | {:.0} | ${:.4} |",
        a.mean_wall_s, a.mean_tokens, a.mean_cost_usd
    );
    let _ = writeln!(
        s,
        "\n## Cost per resolved task (first attempts)\n\n| tokens | model time |\n|---:|---:|\n| {} | {} |",
        or_dash(a.tokens_per_resolved(), |v| format!("{v:.0}")),
        or_dash(a.model_s_per_resolved(), |v| format!("{v:.1} s"))
    );
    if !a.strategies.is_empty() {
        let _ = writeln!(s, "\n## Strategies (per model tier, all episodes)\n");
        s.push_str(&strategy_table(&a.strategies));
    }
    if let Some(t) = &a.time {
        let n = t.episodes.max(1) as f64;
        let _ = writeln!(s, "\n## Where the time went ({} episodes)\n", t.episodes);
        let _ = writeln!(
            s,
            "| wall (sum) | test runs in verification (sum) | wall / tests | harness overhead per episode |\n|---:|---:|---:|---:|"
        );
        // No test ran in verification (empty patches are refused before any run): no ratio.
        let ratio = if t.tests > 0.0 {
            format!("{:.2}x", t.ratio())
        } else {
            "—".into()
        };
        let _ = writeln!(
            s,
            "| {:.1} s | {:.1} s | {ratio} | {:.2} s |",
            t.wall,
            t.tests,
            t.overhead_per_episode()
        );
        let _ = writeln!(
            s,
            "\nPer episode (mean): prepare {:.2} s, agent episode {:.2} s, verification {:.2} s of which test runs {:.2} s.",
            t.prepare / n,
            t.episode / n,
            t.verify / n,
            t.tests / n
        );
        if let Some(m) = t.verify_over_tests {
            let _ = writeln!(
                s,
                "\nVerification took a median **{m:.2}x** its own test runs (per episode, wall time / test runs)."
            );
        }
    }
    s.push_str(&a.resolved_time);
    counts(&mut s, "Stop reasons", &a.stop_reasons);
    counts(&mut s, "Verdicts", &a.verdicts);
    if !a.pass_k.is_empty() {
        let _ = writeln!(s, "\n## pass@k and pass^k\n");
        let _ = writeln!(
            s,
            "Unbiased estimators over tasks with {} attempts: pass@k = chance at least one of k \
             attempts resolves; pass^k = chance all k do.\n",
            a.max_attempts
        );
        let _ = writeln!(s, "| k | pass@k | pass^k |\n|---:|---:|---:|");
        for (k, at, hat) in &a.pass_k {
            let _ = writeln!(s, "| {k} | {} | {} |", pct(*at), pct(*hat));
        }
    }
    if !vs.is_empty() {
        let runs: Vec<&RunSummary> = std::iter::once(a).chain(vs).collect();
        let _ = writeln!(s, "\n## A/B: {} runs\n", runs.len());
        let _ = writeln!(
            s,
            "First attempts. Each run is compared with `{}` by the exact McNemar test on the \
             tasks both have: b = resolved only by `{}`, c = resolved only by the run.\n",
            a.run_id, a.run_id
        );
        s.push_str(&ab_table(&arms(&runs)));
        if runs
            .iter()
            .any(|r| r.has_hidden_stage || r.benches.iter().any(|b| b.bench != "unlabelled"))
        {
            let _ = writeln!(s, "\nPer bench (first attempts):\n");
            s.push_str(&bench_arms_table(&runs));
        }
        for b in vs.iter().filter(|b| !b.strategies.is_empty()) {
            let _ = writeln!(s, "\nStrategies of `{}`:\n", b.run_id);
            s.push_str(&strategy_table(&b.strategies));
        }
        for b in vs {
            let (m, shared) = compare(a, b);
            let _ = writeln!(
                s,
                "\n`{}` vs `{}`: tasks in both runs: {shared}. Exact McNemar test: resolved only by \
                 `{}`: {}, only by `{}`: {}, same outcome: {}; two-sided p = {:.4}{}.",
                a.run_id,
                b.run_id,
                a.run_id,
                m.a_only,
                b.run_id,
                m.b_only,
                m.concordant,
                m.p_value,
                if m.p_value < 0.05 {
                    " (significant at 5%)"
                } else {
                    " (not significant at 5%)"
                }
            );
        }
    }
    s
}

/// The per strategy × tier table as Markdown.
pub fn strategy_table(rows: &[StrategyRow]) -> String {
    let mut s = String::from(
        "| tier | strategy | model | attempts | verified | tokens | model time | wall time | candidates (passing) |\n\
         |---:|---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} | {} | {:.1} s | {:.1} s | {} |",
            row.tier,
            row.strategy,
            row.models.join(", "),
            row.attempts,
            row.verified,
            row.tokens,
            row.model_ms as f64 / 1000.0,
            row.wall_ms as f64 / 1000.0,
            if row.candidates > 0 {
                format!("{} ({})", row.candidates, row.passing)
            } else {
                "—".to_string()
            }
        );
    }
    s
}

fn count_pct(k: usize, n: usize) -> String {
    if n == 0 {
        return format!("{k}");
    }
    format!("{k} ({})", pct(k as f64 / n as f64))
}

/// One row per bench: tasks, verified, resolved (with its Wilson interval), and the verified
/// patches the hidden check did not accept.
pub fn bench_table(rows: &[BenchRow]) -> String {
    let mut s = String::from(
        "| bench | tasks | verified | resolved (hidden check passed) | 95% Wilson | verified, failed its hidden check | hidden check could not run | no hidden check |\n\
         |---|---:|---:|---:|---|---:|---:|---:|\n",
    );
    for b in rows {
        let w = stats::wilson95(b.resolved as u64, b.tasks as u64);
        let _ = writeln!(
            s,
            "| {} | {} | {} | {} | {} – {} | {} | {} | {} |",
            b.bench,
            b.tasks,
            count_pct(b.verified, b.tasks),
            count_pct(b.resolved, b.tasks),
            pct(w.low),
            pct(w.high),
            b.hidden_failed,
            b.hidden_error,
            b.no_check
        );
    }
    s
}

/// Every arm's benches side by side.
pub fn bench_arms_table(runs: &[&RunSummary]) -> String {
    let mut s = String::from(
        "| arm | bench | tasks | verified | resolved | verified, failed its hidden check |\n\
         |---|---|---:|---:|---:|---:|\n",
    );
    for r in runs {
        for b in &r.benches {
            let _ = writeln!(
                s,
                "| `{}` | {} | {} | {} | {} | {} |",
                r.run_id,
                b.bench,
                b.tasks,
                count_pct(b.verified, b.tasks),
                count_pct(b.resolved, b.tasks),
                b.hidden_failed + b.hidden_error
            );
        }
    }
    s
}

/// The A/B table as Markdown.
pub fn ab_table(arms: &[Arm]) -> String {
    let mut s = String::from(
        "| arm | model | resolved | 95% Wilson | tokens / resolved | model-s / resolved | paired | b | c | p |\n\
         |---|---|---:|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for arm in arms {
        let p = &arm.resolved;
        let (paired, b, c, pv) = match &arm.vs_first {
            Some((m, n)) => (
                n.to_string(),
                m.a_only.to_string(),
                m.b_only.to_string(),
                format!("{:.4}", m.p_value),
            ),
            None => ("—".into(), "—".into(), "—".into(), "—".into()),
        };
        let _ = writeln!(
            s,
            "| `{}` | {} | {}/{} ({}) | {} – {} | {} | {} | {paired} | {b} | {c} | {pv} |",
            arm.run_id,
            if arm.models.is_empty() {
                "-".to_string()
            } else {
                arm.models.join(", ")
            },
            p.successes,
            p.trials,
            pct(p.rate),
            pct(p.low),
            pct(p.high),
            or_dash(arm.tokens_per_resolved, |v| format!("{v:.0}")),
            or_dash(arm.model_s_per_resolved, |v| format!("{v:.1}")),
        );
    }
    s
}

fn counts(s: &mut String, title: &str, map: &BTreeMap<String, usize>) {
    let _ = writeln!(s, "\n## {title}\n");
    let _ = writeln!(s, "| | episodes |\n|---|---:|");
    let mut v: Vec<(&String, &usize)> = map.iter().collect();
    v.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
    for (k, n) in v {
        let _ = writeln!(s, "| {k} | {n} |");
    }
}

#[cfg(test)]
#[path = "report_tests.rs"]
mod tests;
