//! The committed benchmark (bench/) is well-formed: 36 tasks (18 toolz, 18 boltons), every task's
//! snapshot is shipped, its bug patch applies to it and its gold patch undoes the bug.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use patchloop::bench::generate::read_tree;
use patchloop::bench::task::read_tasks;
use patchloop::eval::{apply, plan};

#[test]
fn pinned_benchmark_is_complete_and_consistent() {
    let bench = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench");
    let tasks = read_tasks(&bench.join("tasks.jsonl")).unwrap();
    assert_eq!(tasks.len(), 36);
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
        BTreeMap::from([("mahmoud/boltons", 18), ("pytoolz/toolz", 18)])
    );
    for (repo, o) in &ops {
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
            // the statement names neither the file nor the changed lines
            let base = path.rsplit('/').next().unwrap();
            assert!(
                !t.problem_statement.contains(path.as_str()),
                "{}",
                t.instance_id
            );
            assert!(
                !t.problem_statement.contains(&format!(" {base}")),
                "{}",
                t.instance_id
            );
        }
    }
}
