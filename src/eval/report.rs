//! `patchloop report`: a run's results as Markdown, with honest intervals and, for two runs on
//! the same tasks, the exact McNemar test.

use std::collections::BTreeMap;
use std::fmt::Write;

use crate::eval::results::EpisodeResult;
use crate::eval::stats::{self, McNemar, Proportion};

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
    for r in results {
        if let Some(t) = &r.timings {
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
        *verdicts.entry(r.verdict.clone()).or_insert(0) += 1;
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
        time: (time.episodes > 0).then_some(time),
    }
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

pub fn render_markdown(a: &RunSummary, vs: Option<&RunSummary>) -> String {
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
    if a.max_attempts > 1 {
        let _ = writeln!(
            s,
            "\nResolved (all episodes): {}",
            interval(&a.resolved_all)
        );
    }
    if a.errors > 0 {
        let _ = writeln!(
            s,
            "\n{} episode(s) ended in a harness error (counted as not resolved).",
            a.errors
        );
    }
    let _ = writeln!(s, "\n## Cost per episode (mean)\n");
    let _ = writeln!(s, "| wall time | tokens | cost |\n|---:|---:|---:|");
    let _ = writeln!(
        s,
        "| {:.1} s | {:.0} | ${:.4} |",
        a.mean_wall_s, a.mean_tokens, a.mean_cost_usd
    );
    if let Some(t) = &a.time {
        let n = t.episodes.max(1) as f64;
        let _ = writeln!(s, "\n## Where the time went ({} episodes)\n", t.episodes);
        let _ = writeln!(
            s,
            "| wall (sum) | test runs in verification (sum) | wall / tests | harness overhead per episode |\n|---:|---:|---:|---:|"
        );
        let _ = writeln!(
            s,
            "| {:.1} s | {:.1} s | {:.2}x | {:.2} s |",
            t.wall,
            t.tests,
            t.ratio(),
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
    }
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
    if let Some(b) = vs {
        let (m, shared) = compare(a, b);
        let _ = writeln!(s, "\n## `{}` vs `{}`\n", a.run_id, b.run_id);
        let _ = writeln!(
            s,
            "Tasks in both runs: {shared} (first attempts compared).\n"
        );
        let _ = writeln!(s, "| run | resolved |\n|---|---|");
        let _ = writeln!(s, "| `{}` | {} |", a.run_id, interval(&a.resolved_first));
        let _ = writeln!(s, "| `{}` | {} |", b.run_id, interval(&b.resolved_first));
        let _ = writeln!(
            s,
            "\nExact McNemar test: resolved only by `{}`: {}, only by `{}`: {}, same outcome: {}; \
             two-sided p = {:.4}{}.",
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
mod tests {
    use super::*;
    use crate::eval::results::tests::result;

    #[test]
    fn single_run_markdown() {
        let mut rs = vec![
            result("t1", 0, true),
            result("t2", 0, false),
            result("t3", 0, true),
        ];
        rs[1].stop_reason = "step_budget".into();
        rs[2].error = Some("docker went away".into());
        let sum = summarize("r1", &rs);
        assert_eq!(sum.tasks, 3);
        assert_eq!(sum.resolved_first.successes, 2);
        assert!(sum.pass_k.is_empty());
        let md = render_markdown(&sum, None);
        assert!(
            md.contains(
                "Resolved (first attempt): 2/3 = **66.7%** (95% Wilson interval 20.8% – 93.9%)"
            ),
            "{md}"
        );
        assert!(md.contains("| submitted | 2 |"), "{md}");
        assert!(md.contains("| step_budget | 1 |"), "{md}");
        assert!(md.contains("| not_verified | 1 |"), "{md}");
        assert!(md.contains("| 2.0 s | 1000 | $0.0100 |"), "{md}");
        assert!(md.contains("1 episode(s) ended in a harness error"), "{md}");
        assert!(!md.contains("pass@k"));
        assert!(!md.contains("Where the time went"), "no timings recorded");
    }

    #[test]
    fn timings_give_the_ratio_and_the_overhead() {
        use crate::eval::results::Timings;
        let mut rs = vec![result("t1", 0, true), result("t2", 0, true)];
        for (r, tests) in rs.iter_mut().zip([1000, 3000]) {
            r.wall_ms = 4000;
            r.timings = Some(Timings {
                prepare_ms: 1000,
                episode_ms: 500,
                verify_ms: 2500,
                tests_ms: tests,
            });
        }
        let sum = summarize("r1", &rs);
        let t = sum.time.unwrap();
        assert_eq!(t.episodes, 2);
        assert!((t.ratio() - 2.0).abs() < 1e-9);
        assert!((t.overhead_per_episode() - 2.0).abs() < 1e-9);
        let md = render_markdown(&sum, None);
        assert!(md.contains("| 8.0 s | 4.0 s | 2.00x | 2.00 s |"), "{md}");
        assert!(md.contains("prepare 1.00 s, agent episode 0.50 s"), "{md}");
    }

    #[test]
    fn attempts_give_pass_k() {
        let rs = vec![
            result("t1", 0, true),
            result("t1", 1, false),
            result("t2", 0, true),
            result("t2", 1, true),
        ];
        let sum = summarize("r", &rs);
        assert_eq!(sum.max_attempts, 2);
        // t1: pass@1 .5, pass@2 1, pass^2 0; t2: all 1
        assert_eq!(sum.pass_k, vec![(1, 0.75, 0.75), (2, 1.0, 0.5)]);
        let md = render_markdown(&sum, None);
        assert!(md.contains("| 2 | 100.0% | 50.0% |"), "{md}");
        assert!(md.contains("Resolved (all episodes): 3/4"), "{md}");
    }

    #[test]
    fn two_runs_get_mcnemar_on_shared_tasks() {
        let a: Vec<EpisodeResult> = (0..10)
            .map(|i| result(&format!("t{i}"), 0, i < 8))
            .collect();
        let mut b: Vec<EpisodeResult> = (0..10)
            .map(|i| result(&format!("t{i}"), 0, i < 1))
            .collect();
        b.push(result("only_b", 0, true));
        let (sa, sb) = (summarize("a", &a), summarize("b", &b));
        let (m, shared) = compare(&sa, &sb);
        assert_eq!(shared, 10);
        assert_eq!((m.a_only, m.b_only, m.concordant), (7, 0, 3));
        let md = render_markdown(&sa, Some(&sb));
        assert!(md.contains("resolved only by `a`: 7, only by `b`: 0, same outcome: 3; two-sided p = 0.0156 (significant at 5%)"), "{md}");
    }
}
