//! The generalisation layers on the benches' own gold patches: every task of the mutation
//! bench, the real-bug bench (both splits) and the field corpus is fixed by its gold patch, so
//! the pure layers (structural signals, oracle surface) must find nothing on any of them. A
//! finding here is a false flag that would turn a correct repair into `needs_review` (toolz's
//! twice-defined `_check_sigspec` was one). No Docker: the trees come from the snapshots in
//! `bench/sources`, `bench/real/sources`, `bench/real/test/sources` and `bench/field/sources`.

use std::collections::{BTreeMap, BTreeSet};

use crate::verify_common::each_task_tree;

use patchloop::sandbox::context;
use patchloop::verify::apply;
use patchloop::verify::{diff, fit, oracle};

fn flags(tasks: &str, sources: &str) -> (usize, Vec<String>) {
    let mut flagged = Vec::new();
    let n = each_task_tree(tasks, sources, |t, dir| {
        let read = |p: &str| std::fs::read_to_string(dir.join(p)).ok();
        let files = diff::parse(&t.patch).unwrap();
        let pre: BTreeMap<String, Option<String>> = files
            .iter()
            .filter_map(|f| f.old_path.clone())
            .map(|p| (p.clone(), read(&p)))
            .collect();
        let texts: BTreeMap<String, String> = pre
            .iter()
            .filter_map(|(p, t)| Some((p.clone(), t.clone()?)))
            .collect();
        let patched = apply::apply(&t.patch, &texts).unwrap();
        let post: BTreeMap<String, Option<String>> = files
            .iter()
            .filter_map(|f| f.new_path.clone())
            .map(|p| (p.clone(), patched.get(&p).cloned().or_else(|| read(&p))))
            .collect();
        let tests = oracle::test_files(&t.fail_to_pass)
            .into_iter()
            .filter_map(|p| {
                Some(oracle::TestSource {
                    text: read(&p)?,
                    path: p,
                })
            })
            .collect();
        // The test directories as prepare finds them.
        let tree = context::walk_source(dir).unwrap();
        let tests_dirs = context::detect_tests_dirs(&tree);
        let input = fit::FitInput::new(&files, &pre, &post, tests, &t.fail_to_pass, &tests_dirs);
        let r = fit::assess(&input);
        if !r.findings.is_empty() {
            let kinds: BTreeSet<String> = r.findings.iter().map(|f| f.kind.clone()).collect();
            flagged.push(format!(
                "{}: {kinds:?} | {:?}",
                t.instance_id, r.findings[0]
            ));
        }
    });
    (n, flagged)
}

#[test]
fn the_mutation_benchs_gold_patches_are_not_flagged() {
    let (n, flagged) = flags("bench/tasks.jsonl", "bench/sources");
    assert!(n >= 50, "{n} tasks");
    assert!(
        flagged.is_empty(),
        "{} of {n}:\n{}",
        flagged.len(),
        flagged.join("\n")
    );
}

#[test]
fn the_real_benchs_gold_patches_are_not_flagged() {
    let (n, flagged) = flags("bench/real/tasks.jsonl", "bench/real/sources");
    assert!(n >= 24, "{n} tasks");
    assert!(
        flagged.is_empty(),
        "{} of {n}:\n{}",
        flagged.len(),
        flagged.join("\n")
    );
}

/// The field corpus (issue 41): libraries nobody tuned on, with their own ways of writing code.
#[test]
fn the_field_corpus_gold_patches_are_not_flagged() {
    let (n, flagged) = flags("bench/field/tasks.jsonl", "bench/field/sources");
    assert!(n >= 40, "{n} tasks");
    assert!(
        flagged.is_empty(),
        "{} of {n}:\n{}",
        flagged.len(),
        flagged.join("\n")
    );
}

/// The real-bug bench's frozen `test` split (issue 43): libraries nobody tuned on. Its gold
/// patches are real fixes, yet the pure layers flag 10 of the 99 (measured 2026-12-05:
/// `test_literal_branch` 5, `dropped_feature` 2, `module_state`, `swallowed_exception`,
/// `judge_changed` 1 each) where the tuned-on benches show none: the named-rule layers do not
/// carry over (issue 44). Fixing them by reading these patches would spend the split, so the
/// bar here is no regression, and the message names ids and kinds only.
#[test]
fn the_real_test_splits_gold_patches_are_flagged_no_more_than_measured() {
    const MEASURED: usize = 10;
    let (n, flagged) = flags("bench/real/test/tasks.jsonl", "bench/real/test/sources");
    assert!(n >= 60, "{n} tasks");
    let kinds_only: Vec<&str> = flagged
        .iter()
        .map(|f| f.split_once(" | ").map_or(f.as_str(), |(head, _)| head))
        .collect();
    eprintln!(
        "{} of {n} flagged:\n{}",
        flagged.len(),
        kinds_only.join("\n")
    );
    assert!(
        flagged.len() <= MEASURED,
        "{} of {n} (was {MEASURED}):\n{}",
        flagged.len(),
        kinds_only.join("\n")
    );
}
