//! The committed benchmark (bench/) is well-formed: 56 tasks (18 toolz, 18 boltons, 2-3 each from
//! seven small libraries), every task's
//! snapshot is shipped, its bug patch applies to it and its gold patch undoes the bug.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use patchloop::bench::generate::read_tree;
use patchloop::bench::task::read_tasks;
use patchloop::eval::plan;
use patchloop::verify::apply;

#[test]
fn pinned_benchmark_is_complete_and_consistent() {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    let tasks = read_tasks(&bench.join("tasks.jsonl")).unwrap();
    assert_eq!(tasks.len(), 56);
    for t in &tasks {
        for id in t.fail_to_pass.iter().chain(&t.pass_to_pass) {
            assert!(
                patchloop::bench::sandbox_runner::selectable(id),
                "{}: pytest cannot select {id}",
                t.instance_id
            );
        }
    }
    let mut per_repo: BTreeMap<&str, usize> = BTreeMap::new();
    let mut ops: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for t in &tasks {
        *per_repo.entry(t.repo.as_str()).or_default() += 1;
        ops.entry(t.repo.as_str())
            .or_default()
            .insert(t.mutation_operator.as_deref().unwrap_or(""));
    }
    assert_eq!(
        per_repo,
        BTreeMap::from([
            ("benjaminp/six", 2),
            ("foutaise/texttable", 3),
            ("jmespath/jmespath.py", 3),
            ("jpvanhal/inflection", 3),
            ("mahmoud/boltons", 18),
            ("martinblech/xmltodict", 3),
            ("pytoolz/toolz", 18),
            ("r1chardj0n3s/parse", 3),
            ("tkem/cachetools", 3),
        ])
    );
    // The two large sets cover every operator; three tasks cannot.
    for (repo, o) in ops.iter().filter(|(r, _)| per_repo[*r] == 18) {
        assert_eq!(o.len(), 7, "{repo} covers every operator: {o:?}");
    }
    let work = tempfile::tempdir().unwrap();
    for (k, t) in tasks.iter().enumerate() {
        assert!(
            !t.fail_to_pass.is_empty() && !t.pass_to_pass.is_empty(),
            "{}",
            t.instance_id
        );
        let snap = plan::find_snapshot(&bench.join("sources"), t).unwrap();
        assert!(matches!(snap, plan::Snapshot::TarGz(_)));
        let dest = work.path().join(k.to_string());
        plan::materialize(&snap, t, &dest).unwrap();
        let buggy: BTreeMap<String, String> = read_tree(&dest)
            .unwrap()
            .into_iter()
            .filter_map(|(p, b)| Some((p, String::from_utf8(b).ok()?)))
            .collect();
        let fixed = apply::apply(&t.patch, &buggy).unwrap();
        for (path, text) in &fixed {
            assert_ne!(
                &buggy[path], text,
                "{}: the gold patch changes nothing",
                t.instance_id
            );
            // the statement names neither the file nor the changed lines (a test file named
            // after a single-module library, `tests/test_six.py`, does not name `six.py`)
            let base = path.rsplit('/').next().unwrap();
            assert!(!names(&t.problem_statement, path), "{}", t.instance_id);
            assert!(!names(&t.problem_statement, base), "{}", t.instance_id);
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
