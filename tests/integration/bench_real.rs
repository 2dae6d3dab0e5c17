//! The committed real-bug bench (bench/real/) is well-formed: at least 24 bugs mined from the
//! bench's libraries, each with its provenance; every snapshot is shipped, each bug patch
//! applies to its snapshot and the gold patch restores the released code exactly; no file of
//! a buggy tree announces the fix (changelogs are trimmed); and every task of both benches has
//! its hidden check.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use patchloop::bench::generate::read_tree;
use patchloop::bench::task::{Origin, read_tasks};
use patchloop::eval::{hidden, plan};
use patchloop::verify::apply;

fn texts(dir: &Path) -> BTreeMap<String, String> {
    read_tree(dir)
        .unwrap()
        .into_iter()
        .filter_map(|(p, b)| Some((p, String::from_utf8(b).ok()?)))
        .collect()
}

#[test]
fn real_bench_is_complete_and_consistent() {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    let real = bench.join("real");
    let tasks = read_tasks(&real.join("tasks.jsonl")).unwrap();
    assert!(tasks.len() >= 24, "{} real tasks", tasks.len());
    let libraries: BTreeSet<&str> = tasks
        .iter()
        .map(|t| t.provenance.as_ref().unwrap().library.as_str())
        .collect();
    // Every library of the mutation bench but six (whose fixes since 1.13 concern Python 2,
    // 3.12+ or 3.14 only, none of which fail on the sandbox's 3.11).
    assert_eq!(
        libraries,
        BTreeSet::from([
            "boltons",
            "cachetools",
            "inflection",
            "jmespath",
            "parse",
            "texttable",
            "toolz",
            "xmltodict"
        ])
    );
    let work = tempfile::tempdir().unwrap();
    let mut multi_line = 0;
    for (k, t) in tasks.iter().enumerate() {
        let id = &t.instance_id;
        assert_eq!(t.origin(), Origin::Real, "{id}");
        assert!(t.mutation_operator.is_none(), "{id}");
        let prov = t.provenance.as_ref().unwrap();
        assert!(
            !t.fail_to_pass.is_empty() && !t.pass_to_pass.is_empty(),
            "{id}"
        );
        for tid in t.fail_to_pass.iter().chain(&t.pass_to_pass) {
            assert!(
                patchloop::bench::sandbox_runner::selectable(tid),
                "{id}: pytest cannot select {tid}"
            );
        }
        let snap = plan::find_snapshot(&real.join("sources"), t).unwrap();
        assert!(matches!(snap, plan::Snapshot::TarGz(_)), "{id}");
        let released = work.path().join(format!("released-{k}"));
        let mut no_bug = t.clone();
        no_bug.bug_patch.clear();
        plan::materialize(&snap, &no_bug, &released).unwrap();
        let buggy_dir = work.path().join(format!("buggy-{k}"));
        plan::materialize(&snap, t, &buggy_dir).unwrap();
        let released = texts(&released);
        let buggy = texts(&buggy_dir);
        let fixed = apply::apply(&t.patch, &buggy).unwrap();
        let mut changed = 0;
        for (path, text) in &fixed {
            assert_eq!(
                &released[path], text,
                "{id}: the gold patch restores {path}"
            );
            assert_ne!(&buggy[path], text, "{id}: the bug changes {path}");
            let base = path.rsplit('/').next().unwrap();
            assert!(!names(&t.problem_statement, path), "{id} names {path}");
            if base != "__init__.py" {
                assert!(!names(&t.problem_statement, base), "{id} names {base}");
            }
            changed += similar::TextDiff::from_lines(&buggy[path], text)
                .iter_all_changes()
                .filter(|c| c.tag() != similar::ChangeTag::Equal)
                .count();
        }
        assert_eq!(prov.changed_lines, changed, "{id}");
        multi_line += usize::from(changed > 2);
        // The tree never announces the fix: the changelog line's words appear in no file.
        let words: String = prov
            .changelog
            .split(" (")
            .next()
            .unwrap()
            .chars()
            .take(40)
            .collect();
        for (path, text) in &buggy {
            assert!(
                !text.contains(words.as_str()),
                "{id}: {path} contains the changelog line {words:?}"
            );
        }
    }
    // Real fixes are mostly multi-line: that is the point of this bench.
    assert!(
        multi_line * 2 > tasks.len(),
        "{multi_line} of {}",
        tasks.len()
    );
}

#[test]
fn every_task_of_both_benches_has_a_hidden_check() {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    let mut ids = BTreeSet::new();
    for file in [bench.join("tasks.jsonl"), bench.join("real/tasks.jsonl")] {
        let tasks = read_tasks(&file).unwrap();
        assert!(
            hidden::without_check(&file, &tasks).is_empty(),
            "{}: {:?}",
            file.display(),
            hidden::without_check(&file, &tasks)
        );
        for t in &tasks {
            assert!(ids.insert(t.instance_id.clone()), "{} twice", t.instance_id);
        }
        // No stray check: every file names a task.
        for e in std::fs::read_dir(file.parent().unwrap().join("hidden")).unwrap() {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".py").unwrap_or(&name);
            assert!(
                tasks.iter().any(|t| t.instance_id == stem),
                "{name} is no task's check"
            );
        }
    }
}

/// `text` mentions the file `name` on its own (not as the tail of a longer file name).
fn names(text: &str, name: &str) -> bool {
    text.match_indices(name).any(|(i, _)| {
        text[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '/' || c == '.'))
    })
}
