//! `bench gen` end to end on the minilib fixture, in real Docker: prepare, one container,
//! validated tasks that round-trip through the tasks reader, a leak-free statement, a snapshot
//! the bug patch applies to. Needs a Docker daemon (fails, never skips, without one).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use patchloop::bench::commands::{GenArgs, gen_tasks};
use patchloop::bench::generate::{content_commit, read_tree};
use patchloop::bench::task::read_tasks;
use patchloop::verify::apply;

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/minilib")
}

fn args(repo: PathBuf, out: PathBuf, max_tasks: usize) -> GenArgs {
    GenArgs {
        repo,
        out,
        name: Some("fixture/minilib".into()),
        max_tasks,
        max_candidates: None,
        seed: 1,
        test_cmd: None,
        image: None,
        tests_dirs: Vec::new(),
        remove_image: true,
    }
}

#[tokio::test]
async fn generates_validated_tasks_from_the_fixture() {
    let out = tempfile::tempdir().unwrap();
    let o = gen_tasks(&args(fixture(), out.path().to_path_buf(), 4))
        .await
        .unwrap();
    let tasks = read_tasks(&o.tasks_path).unwrap();
    assert_eq!(tasks.len(), 4, "{:?}", o.report);
    assert_eq!(o.report.accepted, 4);
    assert!(o.report.baseline_tests >= 11, "{:?}", o.report);

    // The snapshot is the fixture, named by its content hash.
    let files = read_tree(&o.snapshot_dir).unwrap();
    assert_eq!(files, read_tree(&fixture()).unwrap());
    let commit = content_commit(&files);
    for t in &tasks {
        assert_eq!(t.base_commit, commit);
        assert_eq!(
            o.snapshot_dir.file_name().unwrap().to_string_lossy(),
            t.snapshot_name()
        );
        assert!(!t.fail_to_pass.is_empty());
        assert!(
            t.fail_to_pass
                .iter()
                .all(|id| id.starts_with("tests/test_core.py::")),
            "{:?}",
            t.fail_to_pass
        );
        assert_eq!(
            t.fail_to_pass.len() + t.pass_to_pass.len(),
            o.report.baseline_tests
        );
        // the statement names tests, never the file or the changed code
        assert!(t.problem_statement.contains(&t.fail_to_pass[0]));
        assert!(!t.problem_statement.contains("minilib/core.py"));
        // bug patch then gold patch gives back the original
        let mut texts: BTreeMap<String, String> = files
            .iter()
            .filter_map(|(p, b)| Some((p.clone(), String::from_utf8(b.clone()).ok()?)))
            .collect();
        let buggy = apply::apply(&t.bug_patch, &texts).unwrap();
        assert_ne!(buggy["minilib/core.py"], texts["minilib/core.py"]);
        let original = texts["minilib/core.py"].clone();
        texts.extend(buggy);
        let fixed = apply::apply(&t.patch, &texts).unwrap();
        assert_eq!(fixed["minilib/core.py"], original);
    }
    // Deterministic: the same seed on the same code gives the same tasks.
    let out2 = tempfile::tempdir().unwrap();
    let o2 = gen_tasks(&args(fixture(), out2.path().to_path_buf(), 4))
        .await
        .unwrap();
    assert_eq!(o2.image_tag, o.image_tag);
    assert_eq!(
        read_tasks(&o2.tasks_path)
            .unwrap()
            .iter()
            .map(|t| &t.instance_id)
            .collect::<Vec<_>>(),
        tasks.iter().map(|t| &t.instance_id).collect::<Vec<_>>()
    );
}

/// A copy of the fixture with `edit` applied to its test file.
fn fixture_with_tests(edit: impl Fn(&str) -> String) -> tempfile::TempDir {
    let repo = tempfile::tempdir().unwrap();
    for (rel, bytes) in read_tree(&fixture()).unwrap() {
        let p = repo.path().join(&rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    let t = repo.path().join("tests/test_core.py");
    let text = std::fs::read_to_string(&t).unwrap();
    let edited = edit(&text);
    assert_ne!(edited, text, "the edit changed nothing");
    std::fs::write(&t, edited).unwrap();
    repo
}

#[tokio::test]
async fn a_red_test_is_pre_existing_and_a_red_suite_is_refused() {
    // One test red on the original (as a real library's test that needs a network or a tool):
    // tasks are made, the test is named in the report and is in no task.
    let red = "tests/test_core.py::test_clamp_inside";
    let repo = fixture_with_tests(|t| {
        t.replace("assert clamp(5, 0, 10) == 5", "assert clamp(5, 0, 10) == 6")
    });
    let out = tempfile::tempdir().unwrap();
    let o = gen_tasks(&args(
        repo.path().to_path_buf(),
        out.path().to_path_buf(),
        2,
    ))
    .await
    .expect("one red test is pre-existing, not a dead end");
    assert_eq!(o.report.failing_baseline_tests, vec![red.to_string()]);
    let tasks = read_tasks(&o.tasks_path).unwrap();
    assert!(!tasks.is_empty(), "{:?}", o.report);
    for t in &tasks {
        assert!(
            !t.fail_to_pass.iter().any(|id| id == red)
                && !t.pass_to_pass.iter().any(|id| id == red),
            "the red test is part of {}: {:?} / {:?}",
            t.instance_id,
            t.fail_to_pass,
            t.pass_to_pass
        );
    }

    // Most of the suite red: the environment is wrong, no baseline, each test named.
    let repo = fixture_with_tests(|t| t.replace("():\n", "():\n    assert False\n"));
    let out = tempfile::tempdir().unwrap();
    let err = match gen_tasks(&args(
        repo.path().to_path_buf(),
        out.path().to_path_buf(),
        2,
    ))
    .await
    {
        Ok(o) => panic!("a red suite was accepted: {:?}", o.report),
        Err(e) => format!("{e:#}"),
    };
    assert!(err.contains("fails before any mutation"), "{err}");
    assert!(err.contains(red), "{err}");
    assert!(err.contains("tests/test_core.py::test_describe"), "{err}");
}
