//! Hidden checks in real Docker: a check fails on a pinned task's buggy tree and passes with
//! its gold patch in the container the eval starts after a verdict, a check that tests nothing
//! is an error rather than a pass, and `patchloop eval` with the oracle records the check of
//! each verified episode: resolved only when the check passes, the failing one reported.

use std::path::{Path, PathBuf};

use patchloop::agent::model::ModelOptions;
use patchloop::bench::task::{Task, read_tasks};
use patchloop::eval::hidden::{HiddenCheck, run_check};
use patchloop::eval::run::{EvalArgs, eval};
use patchloop::eval::{plan, results};
use patchloop::sandbox::prepare::{PrepareOptions, prepare};
use patchloop::verify::verdict::Verdict;
use patchloop::verify::{PreparedImage, RerunScope};

fn bench() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

/// A pinned toolz task (one whose check needs no fixture) and its committed hidden check.
fn pinned(id_part: &str) -> (Task, String) {
    let tasks = read_tasks(&bench().join("tasks.jsonl")).unwrap();
    let t = tasks
        .into_iter()
        .find(|t| t.instance_id.contains(id_part))
        .unwrap();
    let check = patchloop::eval::hidden::load(&bench().join("tasks.jsonl"), &t.instance_id)
        .unwrap()
        .expect("every pinned task has a hidden check");
    (t, check)
}

async fn image_of(docker: &bollard::Docker, t: &Task, work: &Path) -> PreparedImage {
    let tree = work.join("hidden-check-test-tree");
    let snap = plan::find_snapshot(&bench().join("sources"), t).unwrap();
    plan::materialize(&snap, t, &tree).unwrap();
    let p = prepare(
        docker,
        &PrepareOptions {
            path: tree,
            test_cmd: Some(t.test_command.clone()),
            ..Default::default()
        },
    )
    .await
    .unwrap();
    PreparedImage::from(p)
}

#[tokio::test]
async fn a_check_fails_on_the_bug_and_passes_with_the_fix() {
    let docker = patchloop::sandbox::connect_and_reap().await.unwrap();
    let (t, check) = pinned("pytoolz__toolz-flipcmp-57828fb272");
    let work = tempfile::tempdir().unwrap();
    let image = image_of(&docker, &t, work.path()).await;
    let run_id = format!("hidden-test-{}", std::process::id());

    let buggy = run_check(&docker, &image, "", &check, &run_id)
        .await
        .unwrap();
    assert_eq!(buggy.status, HiddenCheck::Failed, "{buggy:?}");
    let detail = buggy.detail.unwrap();
    assert!(
        detail.contains("test_inner_join_on_computed_keys"),
        "{detail}"
    );
    let gold = run_check(&docker, &image, &t.patch, &check, &run_id)
        .await
        .unwrap();
    assert_eq!(gold.status, HiddenCheck::Passed, "{gold:?}");

    // A check that collects nothing, or only skips, is a defect of the check, not a pass.
    let empty = run_check(&docker, &image, &t.patch, "X = 1\n", &run_id)
        .await
        .unwrap();
    assert_eq!(empty.status, HiddenCheck::Error, "{empty:?}");
    let skip = "import pytest\n\n@pytest.mark.skip('x')\ndef test_x():\n    pass\n";
    let skipped = run_check(&docker, &image, &t.patch, skip, &run_id)
        .await
        .unwrap();
    assert_eq!(skipped.status, HiddenCheck::Error, "{skipped:?}");
    // The project's pytest configuration and conftests do not apply: the check runs under
    // its own empty ini (a project ini with `-x`/filterwarnings=error would change it).
    // The checkout comes before site-packages on sys.path, as for the project's own tests (a
    // registry copy of the project, or none installed, must not decide what the check imports).
    let cfg = "import os, sys\n\ndef test_own_rootdir(pytestconfig):\n    assert str(pytestconfig.rootpath) == '/tmp/patchloop-hidden'\n    assert os.getcwd() == '/workspace'\n    site = min(i for i, p in enumerate(sys.path) if p.endswith('-packages'))\n    assert '/workspace' in sys.path[:site], sys.path\n";
    let own = run_check(&docker, &image, &t.patch, cfg, &run_id)
        .await
        .unwrap();
    assert_eq!(own.status, HiddenCheck::Passed, "{own:?}");
    // A project that is found through its pytest `pythonpath` (semver: tox skips the install,
    // `.pytest.ini` names `src`) is found by the check too: the shell line reads the ini.
    let ini = "diff --git a/pytest.ini b/pytest.ini\nnew file mode 100644\n--- /dev/null\n+++ b/pytest.ini\n@@ -0,0 +1,2 @@\n+[pytest]\n+pythonpath = extra\ndiff --git a/extra/pl_extra_mod.py b/extra/pl_extra_mod.py\nnew file mode 100644\n--- /dev/null\n+++ b/extra/pl_extra_mod.py\n@@ -0,0 +1 @@\n+VALUE = 7\n";
    let via_ini = "import pl_extra_mod\n\ndef test_found_through_the_ini():\n    assert pl_extra_mod.VALUE == 7\n";
    let found = run_check(&docker, &image, ini, via_ini, &run_id)
        .await
        .unwrap();
    assert_eq!(found.status, HiddenCheck::Passed, "{found:?}");

    // Every container of these runs is gone.
    let left = docker
        .list_containers(Some(bollard::query_parameters::ListContainersOptions {
            all: true,
            filters: Some(std::collections::HashMap::from([(
                "label".to_string(),
                vec![format!("patchloop.run={run_id}")],
            )])),
            ..Default::default()
        }))
        .await
        .unwrap();
    assert!(left.is_empty(), "{left:?}");
    let _ = docker
        .remove_image(
            &image.tag,
            None::<bollard::query_parameters::RemoveImageOptions>,
            None,
        )
        .await;
}

#[tokio::test]
async fn eval_resolves_only_with_the_hidden_check_passing() {
    let (good, good_check) = pinned("pytoolz__toolz-flipcmp-87961fc63d");
    let (other, _) = pinned("pytoolz__toolz-swapargs-942841c67b");
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        patchloop::bench::task::to_jsonl(&[good.clone(), other.clone()]).unwrap(),
    )
    .unwrap();
    std::fs::create_dir_all(dir.path().join("hidden")).unwrap();
    std::fs::write(
        dir.path().join(format!("hidden/{}.py", good.instance_id)),
        &good_check,
    )
    .unwrap();
    // A check the gold patch fails: what a patch that only satisfies the tests looks like.
    std::fs::write(
        dir.path().join(format!("hidden/{}.py", other.instance_id)),
        "from toolz import thread_first\n\ndef test_wrong_expectation():\n    assert thread_first(1, str) == 1\n",
    )
    .unwrap();
    let results_dir = dir.path().join("results");
    let args = EvalArgs {
        tasks: tasks.clone(),
        sources: bench().join("sources"),
        model: "oracle".into(),
        run_id: "hidden-oracle".into(),
        results: results_dir.clone(),
        parallel: Some(2),
        shard: None,
        attempts: 1,
        reruns: 1,
        rerun_scope: RerunScope::All,
        config: None,
        flags: None,
        model_options: ModelOptions::default(),
        keep_images: false,
    };
    let o = eval(&args).await.unwrap();
    assert_eq!((o.errors, o.total, o.resolved), (0, 2, 1), "{o:?}");
    let rs = results::load_run(&results_dir, "hidden-oracle").unwrap();
    let by = |id: &str| rs.iter().find(|r| r.instance_id == id).unwrap().clone();
    let g = by(&good.instance_id);
    assert_eq!(g.verdict, Verdict::Verified);
    assert_eq!(g.hidden_check, Some(HiddenCheck::Passed));
    assert!(g.resolved);
    let b = by(&other.instance_id);
    assert_eq!(b.verdict, Verdict::Verified, "the patch is the gold fix");
    assert_eq!(b.hidden_check, Some(HiddenCheck::Failed));
    assert!(!b.resolved);
    assert!(
        b.hidden_check_detail
            .as_deref()
            .unwrap()
            .contains("test_wrong_expectation"),
        "{b:?}"
    );
    assert_eq!(
        g.origin,
        Some(patchloop::bench::task::Origin::Mutation),
        "the bench travels into the result"
    );
    let report = patchloop::eval::commands::report(&results_dir, "hidden-oracle", &[]).unwrap();
    assert!(
        report.markdown.contains("Verified (first attempt): 2/2"),
        "{}",
        report.markdown
    );
    assert!(
        report.markdown.contains(&format!(
            "- `{}` (mutation, hidden check failed): test_wrong_expectation",
            other.instance_id
        )),
        "{}",
        report.markdown
    );
}
