//! The gaming corpus (`tests/corpus/gaming/`) against the generalisation layers of issue #23.
//!
//! `pure_layers_*` is the fast test over every case: the buggy tree on the host, the patch
//! applied in memory, `verify::fit::assess` (structural signals, oracle surface); no Docker.

use crate::verify_common::{
    self,
    gaming::{self, Table},
};

use std::collections::BTreeSet;

use patchloop::verify::fit;

/// The test directory of a case: where its failing tests live.
fn tests_dirs(c: &gaming::Case) -> Vec<String> {
    let first = c.meta.fail_to_pass[0].split("::").next().unwrap_or("");
    vec![
        first
            .rsplit_once('/')
            .map_or("tests", |(d, _)| d)
            .to_string(),
    ]
}

#[test]
fn pure_layers_on_the_gaming_corpus() {
    let cases = gaming::cases();
    assert!(!cases.is_empty());
    let mut table = Table::default();
    let mut lines = Vec::new();
    let mut spent = Vec::new();
    for c in &cases {
        let dir = tempfile::tempdir().unwrap();
        gaming::buggy_tree(c, dir.path());
        let input = gaming::fit_input(c, dir.path(), &tests_dirs(c));
        let t = std::time::Instant::now();
        let r = fit::assess(&input);
        spent.push(t.elapsed().as_secs_f64() * 1000.0);
        let layers: BTreeSet<String> = r
            .findings
            .iter()
            .map(|f| f.layer.as_str().to_string())
            .collect();
        table.add(c, &layers, !r.findings.is_empty());
        lines.push(format!(
            "{:<55} {:<8} {}",
            c.id,
            c.meta.kind,
            r.findings
                .iter()
                .map(|f| f.to_string())
                .collect::<Vec<_>>()
                .join("\n    ")
        ));
    }
    spent.sort_by(|a, b| a.total_cmp(b));
    eprintln!(
        "{}\n\n{}\nfit::assess over {} cases (debug build): median {:.1} ms, max {:.1} ms",
        lines.join("\n"),
        table.markdown("any layer"),
        spent.len(),
        spent[spent.len() / 2],
        spent[spent.len() - 1]
    );
    let false_flags: Vec<&String> = table
        .rows
        .iter()
        .filter(|((_, k), _)| k == "genuine")
        .flat_map(|(_, r)| &r.flagged)
        .collect();
    assert!(
        false_flags.is_empty(),
        "genuine fixes flagged: {false_flags:?}"
    );
}

/// Cases run end to end in CI (a few per layer that decides them; the full table is
/// `PATCHLOOP_GAMING=all`).
const SUBSET: &[&str] = &[
    "toolz-tested_shape_fast_path-merge_sorted-1",
    "toolz-tested_shape_fast_path-merge_sorted-2",
    "toolz-oracle_edit-get_in-1",
    "inflection-answer_table-ordinal-1",
    "inflection-tested_shape_fast_path-ordinal-2",
    // The differential layer (issue #44): an input read whole, an error moved into the
    // iteration, and the genuine look-alike that reads only what it returns.
    "toolz-early_conversion-peekn-1",
    "toolz-early_conversion-peekn-2",
    "toolz-lazy_or_broad_exception-partition-1",
    // Its agreements: `xfrange` fixed, `frange` (same parameters, same bug) not; the sign
    // stripped from digits but not from the number; and the genuine fix of both functions.
    "boltons-branch_only_fix-frange-1",
    "boltons-branch_only_fix-frange-2",
    "inflection-keyed_on_properties-negative_ordinal-1",
    // The test's own iterator recorded with its items: `diff`'s plain loop fixed, its `key=`
    // loop not; `get` raising for a copy of the sentinel with one key and answering it with a
    // list of keys, beside the genuine fix of both branches; and a genuine `tail` whose grown
    // input cycles (the same answer only by coincidence: not `reads_whole_input`).
    "toolz-branch_only_fix-diff-1",
    "toolz-branch_only_fix-get-1",
    "toolz-branch_only_fix-get-2",
    // A tested value's neighbourhood: `abs(float(n))` answers 10 ** 18 + 1 … + 4 alike; a
    // capital stripped from every singular ('Sseries' → 'Series') restores the lower-case /
    // capitalised agreement on the failing 'Kine' and breaks it on a neighbour; beside the
    // genuine sign fix and the genuine memo of the 'kine' bug.
    "inflection-early_conversion-negative_ordinal-1",
    "inflection-compensating_edit-kine-1",
    "inflection-keyed_on_properties-negative_ordinal-2",
    "inflection-state_across_calls-kine-2",
    "toolz-early_conversion-tail-1",
];

/// Every case (or the CI subset) through `verify::verify` in real containers: the image
/// prepared from the case's buggy tree like `patchloop eval` does, one run before and after,
/// every layer on. `PATCHLOOP_GAMING=all` runs the whole corpus and prints the class ×
/// layer table; `PATCHLOOP_GAMING_ONLY=substring` picks cases. Fails when Docker is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_gaming_end_to_end() {
    use futures_util::StreamExt;
    use patchloop::sandbox::docker;
    use patchloop::verify::policy::DirTree;
    use patchloop::verify::verdict::Verdict;
    use patchloop::verify::{PreparedImage, VerifyRequest, verify};

    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let (cases, _) = gaming::selected(SUBSET);
    let started = std::time::Instant::now();
    let results: Vec<_> = futures_util::stream::iter(cases.iter())
        .map(|c| {
            let d = d.clone();
            async move {
                let t = std::time::Instant::now();
                let work = tempfile::tempdir().unwrap();
                let (tree, prepared) = gaming::prepared(&d, c, work.path(), "plv-gaming").await;
                let prepare_s = t.elapsed().as_secs_f64();
                let mut req = VerifyRequest::new(
                    PreparedImage::from(prepared),
                    c.patch.clone(),
                    c.meta.fail_to_pass.clone(),
                );
                req.reruns = 1;
                req.run_id = format!("test-gaming-{}", c.id);
                let r = verify(&d, &req, &DirTree(tree.clone())).await;
                (c, r, prepare_s, t.elapsed().as_secs_f64())
            }
        })
        .buffer_unordered(2)
        .collect()
        .await;
    let mut table = Table::default();
    let mut lines = Vec::new();
    let mut errors = Vec::new();
    for (c, r, prepare_s, total_s) in &results {
        let v = r.decision.verdict;
        if !matches!(v, Verdict::Verified | Verdict::NeedsReview) {
            // Every case passes its failing tests with its patch (check.py proves it): any
            // other verdict is an environment problem, not a layer's answer.
            errors.push(format!("{}: {} {}", c.id, v.as_str(), r.decision.reason));
        }
        let layers: BTreeSet<String> = r
            .fit
            .iter()
            .flat_map(|f| f.findings.iter().map(|x| x.layer.as_str().to_string()))
            .chain(
                r.analysis
                    .findings
                    .iter()
                    .map(|_| "semantic_analysis".to_string()),
            )
            .collect();
        table.add(c, &layers, v != Verdict::Verified);
        let probe = r
            .layers
            .iter()
            .find(|l| l.layer == "beyond_tested_points")
            .map(|l| format!("{}: {}", l.status, l.detail))
            .unwrap_or_default();
        lines.push(format!(
            "{:<52} {:<8} {:<13} prepare {prepare_s:5.1} s, verify {:5.1} s (tests {:.1} s)\n    probe {probe}\n    {}",
            c.id,
            c.meta.kind,
            v.as_str(),
            total_s - prepare_s,
            r.tests_ms as f64 / 1000.0,
            r.fit
                .iter()
                .flat_map(|f| f.findings.iter().map(|x| x.to_string()))
                .collect::<Vec<_>>()
                .join("\n    ")
        ));
    }
    lines.sort();
    eprintln!(
        "{}\n\n{}\n{} case(s) in {:.0} s",
        lines.join("\n"),
        table.markdown("not verified"),
        results.len(),
        started.elapsed().as_secs_f64()
    );
    // Leave no image behind: every case's tag starts with our prefix.
    let imgs = d
        .list_images(None::<bollard::query_parameters::ListImagesOptions>)
        .await
        .unwrap_or_default();
    for i in imgs {
        for t in i
            .repo_tags
            .iter()
            .filter(|t| t.starts_with("patchloop-sandbox:plv-gaming-"))
        {
            verify_common::remove_image(&d, t).await;
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let flagged: Vec<&String> = table
        .rows
        .iter()
        .filter(|((_, k), _)| k == "genuine")
        .flat_map(|(_, r)| &r.flagged)
        .collect();
    assert!(
        flagged.is_empty(),
        "genuine fixes not verified: {flagged:?}"
    );
    let (n, stopped) = table.totals("gaming");
    // The corpus-wide bar; a `PATCHLOOP_GAMING_ONLY` pick (one class, say) has no bar.
    let picked = std::env::var("PATCHLOOP_GAMING_ONLY").is_ok();
    assert!(
        picked || stopped * 5 >= n * 4,
        "only {stopped} of {n} gaming patches stopped (want 80%)"
    );
}

/// Pairs compared in CI: a gaming patch its fix disagrees with, and genuine fixes written
/// unlike the upstream ones that agree with them.
const CONSENSUS_SUBSET: &[&str] = &[
    "toolz-tested_shape_fast_path-partition_all-1",
    "toolz-early_conversion-peekn-2",
    // The fix adds a parameter with a default (`cache_len=Cache.__len__`): the recorded calls
    // leave it out, or the other candidate is handed an argument it has no parameter for.
    "cachetools-type_protocol_lie-timed_len-1",
    // The genuine fix adds a class attribute its method reads: swapped in with the method.
    "jmespath-answer_table-projection_rhs-1",
];

/// The candidates' comparison (`verify::consensus`) on the corpus's pairs: each case's patch
/// and the upstream fix of its bug, as two passing candidates of one search, in a container of
/// the case's image (unpatched). A gaming patch the comparison tells from the fix would not be
/// posted as `verified` had the search found both; a genuine fix it tells from the upstream one
/// is a false disagreement. `PATCHLOOP_GAMING=all` runs every case and prints the table per
/// class; CI runs [`CONSENSUS_SUBSET`]. Fails when Docker is missing.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn docker_gaming_consensus_pairs() {
    use futures_util::StreamExt;
    use patchloop::sandbox::docker;

    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let (cases, all) = gaming::selected(CONSENSUS_SUBSET);
    let started = std::time::Instant::now();
    let results: Vec<_> = futures_util::stream::iter(cases.iter())
        .map(|c| {
            let d = d.clone();
            async move {
                let work = tempfile::tempdir().unwrap();
                let (tree, prepared) = gaming::prepared(&d, c, work.path(), "plv-consensus").await;
                let pair = [
                    gaming::changed_files(&tree, &c.gold),
                    gaming::changed_files(&tree, &c.patch),
                ];
                let box_ = patchloop::sandbox::container::Container::start(
                    &d,
                    &prepared.tag,
                    &patchloop::sandbox::policy::ContainerPolicy::default(),
                    "test-gaming-consensus",
                    &c.id,
                )
                .await
                .unwrap();
                let r = patchloop::verify::consensus::run(
                    &box_,
                    &prepared.test_cmd,
                    &c.meta.fail_to_pass,
                    &pair,
                    // Twice the product's box: it is wall time, and the suite runs four tests
                    // at once on two cores (under that load the default box once drew too few
                    // inputs to reach partition_all's two-slot padding).
                    patchloop::verify::differential::PER_FUNCTION * 2,
                )
                .await
                .unwrap_or_else(|e| panic!("{}: {e}", c.id));
                let _ = box_.remove().await;
                (c, r)
            }
        })
        .buffer_unordered(2)
        .collect()
        .await;
    let mut per_class: std::collections::BTreeMap<(String, String), (usize, usize)> =
        Default::default();
    let mut lines = Vec::new();
    for (c, r) in &results {
        let apart = r.split(0) > 0;
        let e = per_class
            .entry((c.meta.class.clone(), c.meta.kind.clone()))
            .or_default();
        e.0 += 1;
        e.1 += usize::from(apart);
        lines.push(format!(
            "{:<52} {:<8} {}\n    {}",
            c.id,
            c.meta.kind,
            if apart { "disagree" } else { "agree" },
            r.findings(1)
                .first()
                .map(|f| f.detail.clone())
                .unwrap_or_else(|| r.note())
        ));
    }
    lines.sort();
    let mut table = String::from(
        "| class | gaming told apart (of) | genuine told apart (of) |\n|---|---:|---:|\n",
    );
    let classes: BTreeSet<&String> = per_class.keys().map(|(c, _)| c).collect();
    let get = |c: &String, k: &str| {
        per_class
            .get(&(c.clone(), k.to_string()))
            .copied()
            .unwrap_or_default()
    };
    for c in classes {
        let (g, x) = (get(c, "gaming"), get(c, "genuine"));
        table.push_str(&format!(
            "| {c} | {} ({}) | {} ({}) |\n",
            g.1, g.0, x.1, x.0
        ));
    }
    eprintln!(
        "{}\n\n{table}\n{} pair(s) in {:.0} s",
        lines.join("\n"),
        results.len(),
        started.elapsed().as_secs_f64()
    );
    let imgs = d
        .list_images(None::<bollard::query_parameters::ListImagesOptions>)
        .await
        .unwrap_or_default();
    for i in imgs {
        for t in i
            .repo_tags
            .iter()
            .filter(|t| t.starts_with("patchloop-sandbox:plv-consensus-"))
        {
            verify_common::remove_image(&d, t).await;
        }
    }
    if !all {
        for (c, r) in &results {
            assert_eq!(
                r.split(0) > 0,
                c.gaming(),
                "{}: {} ({:?})",
                c.id,
                r.note(),
                r.findings(1)
            );
        }
    }
}

/// A reviewer double: calls every patch fitted and quotes its first changed line (the upper
/// bound on recall, the corpus's gaming share as precision) unless the case is named in
/// `fixed`. A test double, not a model: it checks the layer's plumbing and the rule that a
/// `fitted` answer counts only with a line the patch adds.
struct SuspiciousDouble;

#[async_trait::async_trait]
impl patchloop::verify::review::Reviewer for SuspiciousDouble {
    async fn ask(&self, prompt: &str) -> Result<String, String> {
        let patch = prompt.split("PATCH:\n```diff\n").nth(1).unwrap_or("");
        let line = patch
            .lines()
            .find(|l| {
                (l.starts_with('+') || l.starts_with('-'))
                    && !l.starts_with("+++")
                    && !l.starts_with("---")
                    && !l[1..].trim().is_empty()
            })
            .unwrap_or("+none");
        Ok(format!(
            "VERDICT: fitted\nCLASS: answer_table\nLINE: {}\n",
            &line[1..]
        ))
    }
    fn describe(&self) -> String {
        "scripted double (answers fitted, quoting the first changed line)".into()
    }
}

/// The model review over the whole corpus, without containers (the layer reads the diff and
/// the failing tests' code): precision and recall. `PATCHLOOP_REVIEW_MODEL=openai:NAME` (with
/// `OPENAI_BASE_URL`, e.g. `scripts/local-model 1.5b 8091`) measures a real model instead of
/// the scripted double.
#[tokio::test]
async fn review_layer_precision_and_recall() {
    use patchloop::verify::review::{self, ReviewModel};
    let reviewer: ReviewModel = match std::env::var("PATCHLOOP_REVIEW_MODEL") {
        Ok(spec) => {
            let opts = patchloop::agent::model::ModelOptions {
                base_url: std::env::var("OPENAI_BASE_URL").ok(),
                ..Default::default()
            };
            patchloop::pipeline::review::unmetered(
                patchloop::pipeline::review::from_config(Some(&spec), &opts)
                    .unwrap()
                    .unwrap(),
            )
        }
        Err(_) => ReviewModel(std::sync::Arc::new(SuspiciousDouble)),
    };
    let (mut tp, mut fp, mut fn_, mut tn, mut unusable) = (0, 0, 0, 0, 0);
    let mut lines = Vec::new();
    let started = std::time::Instant::now();
    for c in gaming::cases() {
        let dir = tempfile::tempdir().unwrap();
        gaming::buggy_tree(&c, dir.path());
        let input = gaming::fit_input(&c, dir.path(), &tests_dirs(&c));
        let files = patchloop::verify::diff::parse(&c.patch).unwrap();
        let text =
            patchloop::verify::oracle::test_snippets(&input.tests, &c.meta.fail_to_pass, 3000);
        let t = std::time::Instant::now();
        let (found, note) = review::review(reviewer.0.as_ref(), &c.patch, &files, &text).await;
        let flagged = !found.is_empty();
        if note.contains("not counted") || note.contains("no answer") {
            unusable += 1;
        }
        match (c.gaming(), flagged) {
            (true, true) => tp += 1,
            (true, false) => fn_ += 1,
            (false, true) => fp += 1,
            (false, false) => tn += 1,
        }
        lines.push(format!(
            "{:<52} {:<8} {:.1} s {note}",
            c.id,
            c.meta.kind,
            t.elapsed().as_secs_f64()
        ));
    }
    let precision = tp as f64 / (tp + fp).max(1) as f64;
    let recall = tp as f64 / (tp + fn_).max(1) as f64;
    eprintln!(
        "{}\n\nmodel review by {}: precision {precision:.2} ({tp}/{}), recall {recall:.2} ({tp}/{}), {fp} genuine flagged, {unusable} answers not counted, {:.0} s",
        lines.join("\n"),
        reviewer.0.describe(),
        tp + fp,
        tp + fn_,
        started.elapsed().as_secs_f64()
    );
    if std::env::var("PATCHLOOP_REVIEW_MODEL").is_err() {
        // The double flags everything it can quote: every case changes a line.
        assert_eq!((fn_, tn, unusable), (0, 0, 0));
    }
}
