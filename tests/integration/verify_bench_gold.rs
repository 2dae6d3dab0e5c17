//! The generalisation layers on the benches' own gold patches: every task of the mutation
//! bench, the real-bug bench (both splits) and the field corpus is fixed by its gold patch, so
//! the pure layers (structural signals, oracle surface) must find nothing on any of them. A
//! finding here is a false flag that would turn a correct repair into `needs_review` (toolz's
//! twice-defined `_check_sigspec` was one). No Docker: the trees come from the snapshots in
//! `bench/sources`, `bench/real/sources`, `bench/real/test/sources` and `bench/field/sources`,
//! and the upstream fixes mined from 59 more libraries from `tests/corpus/mined/`.

use std::collections::{BTreeMap, BTreeSet};

use crate::verify_common::each_task_tree;

use patchloop::sandbox::context;
use patchloop::verify::apply;
use patchloop::verify::evidence::Finding;
use patchloop::verify::{diff, fit, oracle};

/// The pure layers on one gold patch: the files it changes read by `read_pre` (a file it
/// adds, if `read_pre` has it, as written), the failing tests' files by `read_test`. The
/// findings' kinds and the first finding, when there is any.
fn gold_findings(
    patch: &str,
    read_pre: impl Fn(&str) -> Option<String>,
    read_test: impl Fn(&str) -> Option<String>,
    fail_to_pass: &[String],
    tests_dirs: &[String],
) -> Option<(BTreeSet<String>, Finding)> {
    let files = diff::parse(patch).unwrap();
    let pre: BTreeMap<String, Option<String>> = files
        .iter()
        .filter_map(|f| f.old_path.clone())
        .map(|p| (p.clone(), read_pre(&p)))
        .collect();
    let texts: BTreeMap<String, String> = pre
        .iter()
        .filter_map(|(p, t)| Some((p.clone(), t.clone()?)))
        .collect();
    let patched = apply::apply(patch, &texts).unwrap();
    let post: BTreeMap<String, Option<String>> = files
        .iter()
        .filter_map(|f| f.new_path.clone())
        .map(|p| (p.clone(), patched.get(&p).cloned().or_else(|| read_pre(&p))))
        .collect();
    let tests = oracle::test_files(fail_to_pass)
        .into_iter()
        .filter_map(|p| {
            Some(oracle::TestSource {
                text: read_test(&p)?,
                path: p,
            })
        })
        .collect();
    let input = fit::FitInput::new(&files, &pre, &post, tests, fail_to_pass, tests_dirs);
    let r = fit::assess(&input);
    let kinds: BTreeSet<String> = r.findings.iter().map(|f| f.kind.clone()).collect();
    r.findings.into_iter().next().map(|first| (kinds, first))
}

fn flags(tasks: &str, sources: &str) -> (usize, Vec<String>) {
    let mut flagged = Vec::new();
    let n = each_task_tree(tasks, sources, |t, dir| {
        let read = |p: &str| std::fs::read_to_string(dir.join(p)).ok();
        // The test directories as prepare finds them.
        let tree = context::walk_source(dir).unwrap();
        let tests_dirs = context::detect_tests_dirs(&tree);
        if let Some((kinds, first)) =
            gold_findings(&t.patch, read, read, &t.fail_to_pass, &tests_dirs)
        {
            flagged.push(format!("{}: {kinds:?} | {first:?}", t.instance_id));
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
/// patches are real fixes, yet the pure layers flagged 10 of the 99 (2026-12-05:
/// `test_literal_branch` 5, `dropped_feature` 2, `module_state`, `swallowed_exception`,
/// `judge_changed` 1 each) where the tuned-on benches show none: the named-rule layers do not
/// carry over (issue 44). 8 since the narrowing on the mined corpus below (two
/// `test_literal_branch` fewer); 5 since a branch on a test's literal counts only when it
/// answers with a constant (2026-12-06, decided on the tuned archive, measured here after:
/// the three `test_literal_branch` gone). Fixing them by reading these patches would spend
/// the split, so the bar here is no regression, and the message names ids and kinds only.
#[test]
fn the_real_test_splits_gold_patches_are_flagged_no_more_than_measured() {
    const MEASURED: usize = 5;
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

/// The pure layers over one archive of `tests/corpus/mined/` (upstream fixes from libraries
/// no bench uses): the commit's change to library files as the gold patch, the test functions
/// it adds or edits as the failing tests. The cases and, per flagged case, its id, kinds and
/// first finding.
fn mined_flags(archive: &str) -> (usize, Vec<(String, String)>) {
    let dir = tempfile::tempdir().unwrap();
    let st = std::process::Command::new("tar")
        .arg("-xJf")
        .arg(std::path::Path::new("tests/corpus/mined").join(archive))
        .arg("-C")
        .arg(dir.path())
        .status()
        .expect("tar unpacks the mined corpus");
    assert!(
        st.success(),
        "tar -xJf {archive}: {st} (the archives are xz: apt-get install xz-utils)"
    );
    let mut cases: Vec<_> = std::fs::read_dir(dir.path().join("cases"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    cases.sort();
    let strings = |v: &serde_json::Value| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap().to_string())
            .collect()
    };
    let mut flagged = Vec::new();
    for case in &cases {
        let meta: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(case.join("case.json")).unwrap())
                .unwrap();
        let patch = std::fs::read_to_string(case.join("patch.diff")).unwrap();
        let read = |sub: &str, p: &str| std::fs::read_to_string(case.join(sub).join(p)).ok();
        if let Some((kinds, first)) = gold_findings(
            &patch,
            |p| read("pre", p),
            |p| read("tests", p),
            &strings(&meta["fail_to_pass"]),
            &strings(&meta["tests_dirs"]),
        ) {
            flagged.push((
                format!("{}: {kinds:?}", case.file_name().unwrap().to_string_lossy()),
                first.to_string(),
            ));
        }
    }
    (cases.len(), flagged)
}

/// The archive the signals were narrowed on (2026-12-05), in three parts, each measured
/// before it was read: 239 cases of 13 libraries (27 flagged, 8 after the first narrowing);
/// 141 of 8 more, mined after it (12 flagged, 4 after the second); 146 of 8 more, mined after
/// that (9 flagged, 5 after the third). 19 of 526 after that; 16 since a dropped feature is
/// followed through the object's own protocol methods, the object handed on whole and an
/// inlined helper (2026-12-05; the held-out archive and the `test` split did not move):
/// `swallowed_exception` 6, `dropped_feature` 5, `judge_changed` 3, `test_literal_branch` 2,
/// `threshold_beyond_tests` 1, `clock_condition` 1. 15 since a branch on a test's literal
/// counts only when it answers with a constant (2026-12-06: arrow's ISO-week token). 11 since
/// an identity comparison judges by the name's binding, a function an assertion calls is
/// under test, a clock condition counts only when it answers with a constant, and a size
/// threshold is measured against the tests' texts too (2026-12-06); 8 since a dead store,
/// an attribute read in place of one built from the same source and a branch whose state
/// the patch's other added lines read are not dropped features. A fourth part, 133 fixes of
/// 8 more libraries (cattrs, h2, babel, prettytable, dacite, croniter, rfc3986,
/// python-multipart), mined then and measured before it was read: 9 flagged, the same with
/// the build before that day's narrowing; 4 after a fourth (a function the test is named
/// for is its subject, a predicate answering by trying a test, a `setdefault` memo, what the
/// class never had). 12 of 659 in all. The bar is no regression; each flag is printed in
/// full.
#[test]
fn the_mined_fixes_tuned_on_are_flagged_no_more_than_measured() {
    mined_bar("look.tar.xz", 650, 12, true);
}

/// The held-out archive. Its first 164 cases (7 libraries): 17 flagged before any narrowing,
/// 11 after the first, 9 after the second and third. Its other 145 (7 more libraries), mined
/// after the last narrowing: 7 flagged. 16 of 309 (`dropped_feature` 9,
/// `test_literal_branch` 5, `swallowed_exception` 2); 12 since a branch on a test's literal
/// counts only when it answers with a constant (2026-12-06, one `test_literal_branch` left);
/// 11 after the fourth narrowing (2026-12-06, one `dropped_feature` fewer). Its last 107
/// (pyrsistent, furl, schedule, Box, pypika, jsonpickle, bidict, intervaltree), mined after
/// that narrowing: 5 flagged with the build before the day's narrowing, 4 with it. 15 of 416.
/// Ids and kinds only: reading its patches would make it one more tuned-on set.
#[test]
fn the_held_out_mined_fixes_are_flagged_no_more_than_measured() {
    mined_bar("held.tar.xz", 400, 15, false);
}

/// At least `min_cases` cases in `archive` and at most `measured` flagged; each flag printed
/// in full, or (`full` false: a held-out set) by its id and kinds only.
fn mined_bar(archive: &str, min_cases: usize, measured: usize, full: bool) {
    let (n, flagged) = mined_flags(archive);
    let shown: Vec<String> = flagged
        .iter()
        .map(|(h, f)| {
            if full {
                format!("{h} | {f}")
            } else {
                h.clone()
            }
        })
        .collect();
    eprintln!("{} of {n} flagged:\n{}", flagged.len(), shown.join("\n"));
    assert!(n >= min_cases, "{n} cases");
    assert!(
        flagged.len() <= measured,
        "{} of {n} (was {measured}):\n{}",
        flagged.len(),
        shown.join("\n")
    );
}
