use super::*;
use crate::bench::task::Origin;
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
    let md = render_markdown(&sum, &[]);
    assert!(
        md.contains(
            "Resolved (first attempt): 2/3 = **66.7%** (95% Wilson interval 20.8% – 93.9%)"
        ),
        "{md}"
    );
    assert!(md.contains("| submitted | 2 |"), "{md}");
    assert!(md.contains("| step_budget | 1 |"), "{md}");
    assert!(md.contains("| still_failing | 1 |"), "{md}");
    assert!(md.contains("| 2.0 s | 1000 | $0.0100 |"), "{md}");
    assert!(md.contains("1 episode(s) ended in a harness error"), "{md}");
    assert!(!md.contains("pass@k"));
    assert!(!md.contains("Where the time went"), "no timings recorded");
}

#[test]
fn episodes_without_a_patch_are_not_counted_as_rejected_patches() {
    let mut rs = vec![result("t1", 0, false), result("t2", 0, false)];
    for r in &mut rs {
        r.verdict = crate::verify::verdict::Verdict::Policy;
        r.stop_reason = "time_limit".into();
    }
    rs[0].patch = String::new();
    let md = render_markdown(&summarize("r1", &rs), &[]);
    assert!(md.contains("| policy (no patch) | 1 |"), "{md}");
    assert!(md.contains("| policy | 1 |"), "{md}");
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
    let md = render_markdown(&sum, &[]);
    assert!(md.contains("| 8.0 s | 4.0 s | 2.00x | 2.00 s |"), "{md}");
    assert!(md.contains("prepare 1.00 s, agent episode 0.50 s"), "{md}");
    // Verification / its test runs: 2.5 and 0.83, the median of two their mean.
    assert!(md.contains("a median **1.67x** its own test runs"), "{md}");
}

#[test]
fn each_resolved_task_gets_its_wall_time_against_model_and_verification_tests() {
    use crate::eval::results::Timings;
    let mut rs = vec![
        result("fast", 0, true),
        result("slow", 0, true),
        result("unresolved", 0, false),
    ];
    // wall = prepare + episode + verification; the episode holds localization, the model's
    // time and the search around it.
    for (r, (episode, model)) in rs.iter_mut().zip([(6000, 4000), (30_000, 5000), (9, 9)]) {
        r.model_ms = model;
        r.wall_ms = 1000 + episode + 3000;
        r.timings = Some(Timings {
            prepare_ms: 1000,
            episode_ms: episode,
            verify_ms: 3000,
            tests_ms: 2000,
        });
    }
    let md = resolved_time_section(&rs);
    assert!(md.contains("(2 tasks)"), "{md}");
    assert!(!md.contains("unresolved"), "{md}");
    // fast: 10 s / (4 + 2) = 1.67x; slow: 34 s / (5 + 2) = 4.86x; the median of two is the upper.
    assert!(
        md.contains("| fast | 10.0 s | 4.0 s | 2.0 s | 1.67x | 1.0 s | 0.0 s | 2.0 s | 1.0 s |"),
        "{md}"
    );
    assert!(
        md.contains("| slow | 34.0 s | 5.0 s | 2.0 s | 4.86x |"),
        "{md}"
    );
    assert!(md.contains("**4.86x**"), "{md}");
    assert_eq!(resolved_time_section(&rs[2..]), "", "nothing resolved");
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
    let md = render_markdown(&sum, &[]);
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
    let md = render_markdown(&sa, std::slice::from_ref(&sb));
    assert!(md.contains("resolved only by `a`: 7, only by `b`: 0, same outcome: 3; two-sided p = 0.0156 (significant at 5%)"), "{md}");
}

#[test]
fn spend_per_resolved_task_counts_first_attempts() {
    let mut rs = vec![
        result("t1", 0, true),
        result("t1", 1, true),
        result("t2", 0, false),
    ];
    rs[0].model_ms = 3000;
    rs[1].total_tokens = 5000; // a later attempt: not in the first-attempt figures
    rs[1].model_ms = 9000;
    rs[2].model_ms = 1000;
    let sum = summarize("r", &rs);
    assert_eq!((sum.first_tokens, sum.first_model_ms), (2000, 4000));
    assert_eq!(sum.tokens_per_resolved(), Some(2000.0));
    assert_eq!(sum.model_s_per_resolved(), Some(4.0));
    let md = render_markdown(&sum, &[]);
    assert!(
        md.contains("| tokens | model time |\n|---:|---:|\n| 2000 | 4.0 s |"),
        "{md}"
    );
    assert!(!md.contains("## Strategies"), "no attempts recorded: {md}");
    let none = summarize("n", &[result("t1", 0, false)]);
    assert_eq!(none.tokens_per_resolved(), None);
    assert!(
        render_markdown(&none, &[]).contains("|---:|---:|\n| — | — |"),
        "{}",
        render_markdown(&none, &[])
    );
}

#[test]
fn model_ms_falls_back_to_the_trajectory() {
    use crate::eval::trajectory::{parse, tests::TREE};
    let t = parse(TREE);
    let mut r = result("t1", 0, true);
    assert_eq!(episode_model_ms(&r, Some(&t)), 6300);
    assert_eq!(episode_model_ms(&r, None), 0);
    r.model_ms = 5;
    assert_eq!(
        episode_model_ms(&r, Some(&t)),
        5,
        "the result's own figure wins"
    );
}

#[test]
fn strategies_are_summed_per_tier() {
    use crate::verify::receipt::RepairAttempt;
    let att = |tier, strategy: &str, model: &str, result: &str, cands, passing| RepairAttempt {
        tier,
        model: model.into(),
        strategy: serde_json::from_value(serde_json::json!(strategy)).unwrap(),
        result: crate::verify::attempts::Outcome::parse(result).unwrap(),
        tokens: 100 * (tier as u64 + 1),
        cost_usd: 0.0,
        model_ms: 1500,
        wall_ms: 2000,
        candidates: cands,
        passing,
        why: String::new(),
        ..RepairAttempt::default()
    };
    let mut rs = vec![result("t1", 0, false), result("t2", 0, true)];
    rs[0].attempts = vec![att(1, "loop", "big", "not_verified", 0, 0)];
    rs[1].attempts = vec![
        att(0, "candidates", "small", "not_passing", 4, 0),
        att(0, "loop", "small", "budget", 0, 0),
        att(1, "candidates", "big", "verified", 3, 1),
    ];
    let mut more = result("t3", 0, true);
    more.attempts = vec![att(0, "candidates", "small2", "verified", 2, 2)];
    rs.push(more);
    let sum = summarize("r", &rs);
    let keys: Vec<(usize, &str, usize, usize)> = sum
        .strategies
        .iter()
        .map(|r| (r.tier, r.strategy.as_str(), r.attempts, r.verified))
        .collect();
    assert_eq!(
        keys,
        vec![
            (0, "candidates", 2, 1),
            (0, "loop", 1, 0),
            (1, "loop", 1, 0),
            (1, "candidates", 1, 1)
        ]
    );
    assert_eq!(sum.strategies[0].models, vec!["small", "small2"]);
    assert_eq!(
        (sum.strategies[0].candidates, sum.strategies[0].passing),
        (6, 2)
    );
    let md = render_markdown(&sum, &[]);
    assert!(
        md.contains("| 0 | candidates | small, small2 | 2 | 1 | 200 | 3.0 s | 4.0 s | 6 (2) |"),
        "{md}"
    );
    assert!(
        md.contains("| 1 | loop | big | 1 | 0 | 200 | 1.5 s | 2.0 s | — |"),
        "{md}"
    );
    // an arm compared with a run without attempts shows its own breakdown
    let plain = summarize("plain", &[result("t1", 0, true)]);
    let md = render_markdown(&plain, std::slice::from_ref(&sum));
    assert!(!md.contains("## Strategies"), "{md}");
    assert!(
        md.contains("Strategies of `r`:\n\n| tier | strategy |")
            && md.contains("| 1 | loop | big | 1 | 0 | 200 | 1.5 s | 2.0 s | — |"),
        "{md}"
    );
}

/// Results of a run over both benches with hidden checks: (id, bench, verdict, check).
fn checked(rows: &[(&str, Origin, bool, HiddenCheck)]) -> Vec<EpisodeResult> {
    rows.iter()
        .map(|(id, origin, verified, check)| {
            let mut r = result(id, 0, *verified && check.allows_resolved());
            r.verdict = if *verified {
                crate::verify::verdict::Verdict::Verified
            } else {
                crate::verify::verdict::Verdict::StillFailing
            };
            r.origin = Some(*origin);
            r.hidden_check = Some(*check);
            if *check == HiddenCheck::Failed {
                r.hidden_check_detail = Some("test_empty: assert [] == ['a']\nmore".into());
            }
            r
        })
        .collect()
}

#[test]
fn resolved_needs_the_hidden_check_and_benches_are_reported_apart() {
    use HiddenCheck::*;
    use Origin::{Mutation as M, Real as R};
    let rs = checked(&[
        ("m1", M, true, Passed),
        ("m2", M, true, Failed),
        ("m3", M, false, NotRun),
        ("m4", M, true, None),
        ("r1", R, true, Passed),
        ("r2", R, false, NotRun),
        ("r3", R, true, Error),
    ]);
    let sum = summarize("r", &rs);
    assert_eq!(sum.verified_first.successes, 5);
    assert_eq!(sum.resolved_first.successes, 3, "m1, m4 (no check), r1");
    let mutation = &sum.benches[0];
    assert_eq!(
        (
            mutation.bench.as_str(),
            mutation.tasks,
            mutation.verified,
            mutation.resolved
        ),
        ("mutation", 4, 3, 2)
    );
    assert_eq!((mutation.hidden_failed, mutation.no_check), (1, 1));
    let real = &sum.benches[1];
    assert_eq!(
        (real.tasks, real.verified, real.resolved, real.hidden_error),
        (3, 2, 1, 1)
    );
    let ids: Vec<&str> = sum
        .hidden_failures
        .iter()
        .map(|f| f.instance_id.as_str())
        .collect();
    assert_eq!(ids, vec!["m2", "r3"]);
    let md = render_markdown(&sum, &[]);
    assert!(md.contains("Resolved (first attempt): 3/7"), "{md}");
    assert!(md.contains("Verified (first attempt): 5/7"), "{md}");
    assert!(
        md.contains("| mutation | 4 | 3 (75.0%) | 2 (50.0%) | 15.0% – 85.0% | 1 | 0 | 1 |"),
        "{md}"
    );
    assert!(md.contains("| real | 3 | 2 (66.7%) | 1 (33.3%) |"), "{md}");
    assert!(
        md.contains("- `m2` (mutation, hidden check failed): test_empty: assert [] == ['a']\n"),
        "{md}"
    );
    assert!(md.contains("- `r3` (real, hidden check error): \n"), "{md}");
    // arms: each run's benches side by side
    let other = summarize(
        "b",
        &checked(&[("m1", M, true, Passed), ("r1", R, true, Failed)]),
    );
    let md = render_markdown(&sum, std::slice::from_ref(&other));
    assert!(
        md.contains("| `r` | real | 3 | 2 (66.7%) | 1 (33.3%) | 1 |"),
        "{md}"
    );
    assert!(
        md.contains("| `b` | real | 1 | 1 (100.0%) | 0 (0.0%) | 1 |"),
        "{md}"
    );
    // an older run (no origin, no hidden stage) renders as before
    let old = render_markdown(&summarize("o", &[result("t1", 0, true)]), &[]);
    assert!(
        !old.contains("By bench") && !old.contains("Verified (first"),
        "{old}"
    );
}

#[test]
fn ab_table_of_four_runs_pairs_against_the_first() {
    let run = |ids: &[&str], resolved: &dyn Fn(usize) -> bool, model_ms: u64| {
        ids.iter()
            .enumerate()
            .map(|(i, id)| {
                let mut r = result(id, 0, resolved(i));
                r.model_ms = model_ms;
                r
            })
            .collect::<Vec<_>>()
    };
    let ten: Vec<String> = (0..10).map(|i| format!("t{i}")).collect();
    let ten: Vec<&str> = ten.iter().map(String::as_str).collect();
    let base = summarize("loop", &run(&ten, &|i| i < 3, 1500));
    let cands = summarize("cands", &run(&ten, &|i| i < 8, 0));
    // five shared tasks and one the first run lacks
    let part = summarize(
        "part",
        &run(&["t0", "t1", "t2", "t3", "t4", "extra"], &|i| i >= 2, 600),
    );
    let none = summarize("none", &run(&ten, &|_| false, 100));
    let rows = arms(&[&base, &cands, &part, &none]);
    assert_eq!(rows[0].vs_first, None);
    let (m, paired) = rows[2].vs_first.unwrap();
    // base resolves t0 t1 t2, part resolves t2 t3 t4 (+ extra, unpaired)
    assert_eq!((m.a_only, m.b_only, m.concordant, paired), (2, 2, 1, 5));
    assert_eq!(m.p_value, 1.0);
    let md = render_markdown(&base, &[cands, part, none]);
    assert!(md.contains("## A/B: 4 runs"), "{md}");
    for row in [
        "| `loop` | oracle | 3/10 (30.0%) | 10.8% – 60.3% | 3333 | 5.0 | — | — | — | — |",
        "| `cands` | oracle | 8/10 (80.0%) | 49.0% – 94.3% | 1250 | 0.0 | 10 | 0 | 5 | 0.0625 |",
        "| `part` | oracle | 4/6 (66.7%) | 30.0% – 90.3% | 1500 | 0.9 | 5 | 2 | 2 | 1.0000 |",
        "| `none` | oracle | 0/10 (0.0%) | 0.0% – 27.8% | — | — | 10 | 3 | 0 | 0.2500 |",
    ] {
        assert!(md.contains(row), "missing {row}\n{md}");
    }
    assert!(
        md.contains("`loop` vs `part`: tasks in both runs: 5."),
        "{md}"
    );
}
