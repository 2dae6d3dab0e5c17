//! `patchloop eval --model oracle` end to end in real Docker on two pinned toolz tasks: the
//! gold patch applied through the agent's tools resolves both (one with its failing tests
//! held out of the agent's image), a re-run resumes without re-running anything, and a tasks
//! file with bad lines is rejected with their line numbers.

use std::path::{Path, PathBuf};

use patchloop::agent::model::ModelOptions;
use patchloop::eval::run::{EvalArgs, eval};
use patchloop::verify::RerunScope;

fn bench() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

fn args(tasks: &Path, results: &Path) -> EvalArgs {
    EvalArgs {
        tasks: tasks.to_path_buf(),
        sources: bench().join("sources"),
        model: "oracle".into(),
        run_id: "oracle-test".into(),
        results: results.to_path_buf(),
        parallel: Some(2),
        shard: None,
        attempts: 1,
        // Two runs per phase with the focused plan: a full run, then the fail-to-pass tests.
        reruns: 2,
        rerun_scope: RerunScope::FailToPass,
        config: None,
        flags: Some(patchloop::config::ConfigFile {
            budgets: Some(patchloop::config::BudgetsFile {
                max_steps: Some(10),
                ..Default::default()
            }),
            ..Default::default()
        }),
        model_options: ModelOptions::default(),
        keep_images: false,
    }
}

#[tokio::test]
async fn oracle_resolves_pinned_tasks_and_resumes() {
    // prepare() finds the base image scripts/test built ($PATCHLOOP_TEST_BASE) by its tag.
    if let Ok(base) = std::env::var("PATCHLOOP_TEST_BASE") {
        eprintln!("test base image: {base}");
    }
    let text = std::fs::read_to_string(bench().join("tasks.jsonl")).unwrap();
    let mut lines: Vec<serde_json::Value> = text
        .lines()
        .filter(|l| l.contains("pytoolz__toolz"))
        .take(2)
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    // Hold out the file with the first task's failing tests: verification must copy it back.
    let f2p = lines[0]["FAIL_TO_PASS"][0].as_str().unwrap().to_string();
    let hidden = f2p.split("::").next().unwrap().to_string();
    lines[0]["hidden_test_files"] = serde_json::json!([hidden]);
    let ids: Vec<String> = lines
        .iter()
        .map(|l| l["instance_id"].as_str().unwrap().to_string())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    std::fs::write(
        &tasks,
        lines.iter().map(|l| format!("{l}\n")).collect::<String>(),
    )
    .unwrap();
    let results = dir.path().join("results");

    let o = eval(&args(&tasks, &results)).await.unwrap();
    assert_eq!((o.ran, o.skipped, o.errors), (2, 0, 0), "{o:?}");
    assert_eq!((o.resolved, o.total), (2, 2), "{o:?}");
    let run = results.join("oracle-test");
    for id in &ids {
        let r: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(format!("episodes/{id}__0.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(r["verdict"], "verified", "{r}");
        assert_eq!(r["stop_reason"], "submitted", "{r}");
        assert!(run.join(format!("episodes/{id}__0.traj.jsonl")).is_file());
        let receipt: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(run.join(format!("receipts/{id}__0.json"))).unwrap(),
        )
        .unwrap();
        let scopes: Vec<&str> = receipt["runs"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["scope"].as_str().unwrap())
            .collect();
        assert_eq!(
            scopes,
            ["all", "fail_to_pass", "all", "fail_to_pass"],
            "{receipt}"
        );
    }
    // The agent's tree lacked the held-out file: the oracle's trajectory never saw it, but
    // the receipt of the verification that resolved the task lists it.
    let receipt =
        std::fs::read_to_string(run.join(format!("receipts/{}__0.json", ids[0]))).unwrap();
    assert!(receipt.contains(&hidden), "the receipt names the holdout");
    let preds = std::fs::read_to_string(run.join("predictions.jsonl")).unwrap();
    let preds: Vec<serde_json::Value> = preds
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(preds.len(), 2);
    for p in &preds {
        assert!(ids.contains(&p["instance_id"].as_str().unwrap().to_string()));
        assert_eq!(p["model_name_or_path"], "oracle");
        assert!(p["model_patch"].as_str().unwrap().contains("\n+"), "{p}");
    }

    // Resume: nothing re-runs, finished results are untouched.
    let first = run.join(format!("episodes/{}__0.json", ids[1]));
    let before = std::fs::read_to_string(&first).unwrap();
    let again = eval(&args(&tasks, &results)).await.unwrap();
    assert_eq!(
        (again.ran, again.skipped, again.resolved),
        (0, 2, 2),
        "{again:?}"
    );
    assert_eq!(std::fs::read_to_string(&first).unwrap(), before);
}

#[tokio::test]
async fn tasks_file_with_bad_lines_names_them() {
    let dir = tempfile::tempdir().unwrap();
    let tasks = dir.path().join("tasks.jsonl");
    let good = std::fs::read_to_string(bench().join("tasks.jsonl"))
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .to_string();
    std::fs::write(
        &tasks,
        format!("{good}\nnot json\n\n{{\"instance_id\": \"x\"}}\n"),
    )
    .unwrap();
    let err = eval(&args(&tasks, &dir.path().join("results")))
        .await
        .unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("line 2"), "{msg}");
    assert!(msg.contains("line 4"), "{msg}");
    assert!(!msg.contains("line 1:"), "{msg}");
    assert!(!dir.path().join("results").exists(), "nothing ran");
}
