//! `workflow_run` without a `test-command` input, end to end on real libraries of the pinned
//! benchmark (bench/): the checkout is a task's buggy snapshot, the failed job's log is written
//! in the real runner's format (timestamps, `##[group]Run`, the script lines, `shell:`/`env:`,
//! a `pip install pytest==…` step before the test step, `##[error]`), the model is scripted to
//! apply the task's gold patch, and the real sandbox, verifier and mock GitHub do the rest. The
//! test command must come from the log's test step, not from the install step that names
//! pytest. Needs Docker and the base image (`$PATCHLOOP_TEST_BASE`).

use crate::github_common;

use std::path::{Path, PathBuf};
use std::process::Command;

use github_common::demo::*;
use github_common::*;
use patchloop::bench::task::{Task, read_tasks};
use patchloop::eval::plan;

const TOKEN: &str = "ghs_envtoken0123456789abcdefghijklmnopqr";

fn bench() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bench")
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Codertocat",
            "-c",
            "user.email=c@example.com",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=changes",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The failed job's log as a runner writes it: install step (naming pytest), then the test step
/// whose output is the pytest session with the task's failing tests.
fn runner_log(t: &Task) -> String {
    let mut body = vec![
        "Current runner version: '2.321.0'".to_string(),
        "##[group]Run actions/setup-python@v5".into(),
        "with:".into(),
        "  python-version: 3.11".into(),
        "##[endgroup]".into(),
        "##[group]Run python -m pip install --upgrade pip".into(),
        "\x1b[36;1mpython -m pip install --upgrade pip\x1b[0m".into(),
        "\x1b[36;1mpython -m pip install pytest==7.2.1\x1b[0m".into(),
        "shell: /usr/bin/bash -e {0}".into(),
        "env:".into(),
        "  pythonLocation: /opt/hostedtoolcache/Python/3.11.10/x64".into(),
        "##[endgroup]".into(),
        "Successfully installed iniconfig-2.0.0 packaging-24.2 pluggy-1.5.0 pytest-7.2.1".into(),
        "##[group]Run python -m pytest -q tests".into(),
        "\x1b[36;1mpython -m pytest -q tests\x1b[0m".into(),
        "shell: /usr/bin/bash -e {0}".into(),
        "##[endgroup]".into(),
        "============================= test session starts ==============================".into(),
        "platform linux -- Python 3.11.10, pytest-7.2.1, pluggy-1.5.0".into(),
        "=========================== short test summary info ============================".into(),
    ];
    for id in &t.fail_to_pass {
        body.push(format!("\x1b[31mFAILED\x1b[0m {id} - AssertionError"));
    }
    body.push(format!(
        "========================= {} failed, {} passed in 0.91s =========================",
        t.fail_to_pass.len(),
        t.pass_to_pass.len()
    ));
    body.push("##[error]Process completed with exit code 1.".into());
    body.push("Post job cleanup.".into());
    body.iter()
        .enumerate()
        .map(|(i, l)| format!("2026-11-30T12:34:{:02}.{:07}Z {l}\n", 56 + i / 40, i * 1234))
        .collect()
}

/// The gold patch's single hunk as a `str_replace` (old block → new block, context included).
fn replace_of(patch: &str) -> (String, String, String) {
    let path = patch
        .lines()
        .find_map(|l| l.strip_prefix("+++ b/"))
        .unwrap()
        .to_string();
    let (mut old, mut new) = (String::new(), String::new());
    let mut in_hunk = false;
    for l in patch.lines() {
        if l.starts_with("@@") {
            assert!(!in_hunk, "one hunk per gold patch here");
            in_hunk = true;
            continue;
        }
        if !in_hunk {
            continue;
        }
        match l.split_at(l.len().min(1)) {
            (" ", rest) | ("", rest) => {
                old.push_str(rest);
                old.push('\n');
                new.push_str(rest);
                new.push('\n');
            }
            ("-", rest) => {
                old.push_str(rest);
                old.push('\n');
            }
            ("+", rest) => {
                new.push_str(rest);
                new.push('\n');
            }
            _ => {}
        }
    }
    (path, old, new)
}

/// A scripted model (JSON is YAML) that runs the tests, applies the gold patch and submits.
fn script(t: &Task, dir: &Path) -> PathBuf {
    let (path, old, new) = replace_of(&t.patch);
    let s = serde_json::json!({"turns": [
        {"content": "Run the tests.", "tool_calls": [{"name": "run_tests", "arguments": {}}]},
        {"content": "Fix it.", "tool_calls": [{"name": "str_replace",
            "arguments": {"path": path, "old_str": old, "new_str": new}}]},
        {"content": "Done.", "tool_calls": [{"name": "submit", "arguments": {}}]},
    ]});
    let p = dir.join("model.yaml");
    std::fs::write(&p, serde_json::to_string_pretty(&s).unwrap()).unwrap();
    p
}

fn run_action(mock: &MockGitHub, event: &[u8], ws: &Path, model: &Path) -> (i32, String, String) {
    let files = tempfile::tempdir().unwrap();
    let f = |n: &str| files.path().join(n);
    std::fs::write(f("event.json"), event).unwrap();
    std::fs::create_dir_all(f("runner_temp")).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_patchloop"));
    cmd.arg("action").env_clear();
    for k in ["PATH", "HOME", "DOCKER_HOST"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    let out = cmd
        .current_dir(ws)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "workflow_run")
        .env("GITHUB_EVENT_PATH", f("event.json"))
        .env("GITHUB_WORKSPACE", ws)
        .env("GITHUB_API_URL", mock.url())
        .env("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}"))
        .env("GITHUB_OUTPUT", f("output"))
        .env("GITHUB_STEP_SUMMARY", f("summary.md"))
        .env("RUNNER_TEMP", f("runner_temp"))
        .env("INPUT_GITHUB-TOKEN", TOKEN)
        .env("INPUT_MODEL", format!("scripted:{}", model.display()))
        .env("INPUT_RERUNS", "1")
        .output()
        .expect("running patchloop");
    let outputs = std::fs::read_to_string(f("output")).unwrap_or_default();
    // The job summary says why a verdict is what it is: part of every failure message.
    let summary = std::fs::read_to_string(f("summary.md")).unwrap_or_default();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr)
            + "\n--- job summary ---\n"
            + &summary,
        outputs,
    )
}

async fn repair(instance_id: &str) {
    let tasks = read_tasks(&bench().join("tasks.jsonl")).unwrap();
    let t = tasks
        .iter()
        .find(|t| t.instance_id == instance_id)
        .unwrap_or_else(|| panic!("{instance_id} is not in bench/tasks.jsonl"));
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join(instance_id.replace("__", "-"));
    let snap = plan::find_snapshot(&bench().join("sources"), t).unwrap();
    plan::materialize(&snap, t, &ws).unwrap();
    git(&ws, &["init", "-q"]);
    git(&ws, &["add", "-A"]);
    git(
        &ws,
        &["commit", "-q", "-m", &format!("change ({instance_id})")],
    );
    let sha = git(&ws, &["rev-parse", "HEAD"]);

    let mock = MockGitHub::start().await;
    // The PR is the change that introduced the bug (its hunk, as pulls/list-files shows it).
    let (path, _, _) = replace_of(&t.patch);
    let pr_hunk: String = t
        .bug_patch
        .lines()
        .skip_while(|l| !l.starts_with("@@"))
        .collect::<Vec<_>>()
        .join("\n");
    mock.add_pr(2, &sha, vec![(path.as_str(), "modified", pr_hunk.as_str())]);
    let head = std::fs::read_to_string(ws.join(&path)).unwrap();
    mock.with(|s| {
        s.jobs.insert(
            RUN_ID,
            serde_json::json!({"total_count": 1, "jobs": [
                {"id": 12, "name": "test (3.11)", "conclusion": "failure"}]}),
        );
        s.logs.insert(12, runner_log(t));
        s.permissions.insert("Codertocat".into(), "write".into());
        s.contents.insert(path.clone(), head);
    });
    let model = script(t, root.path());
    let (code, output, outputs) = run_action(&mock, &workflow_run_event(&sha), &ws, &model);
    let _images = RemoveImages(sandbox_tags(&output));
    assert_eq!(code, 0, "{output}");
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    let o = parse_outputs(&outputs);
    assert_eq!(
        o.get("verdict").map(String::as_str),
        Some("verified"),
        "{output}"
    );
    // The command came from the test step, never the `pip install pytest==…` step.
    assert!(
        output.contains("test command: `python -m pytest -q tests`"),
        "{output}"
    );
    assert!(!mock.writes().is_empty(), "something was posted");
    mock.with(|s| {
        let status = &s.comments.last().expect("a status comment").2;
        assert!(
            status.starts_with("### patchloop: verified fix"),
            "{status}"
        );
        for id in &t.fail_to_pass {
            assert!(status.contains(id.as_str()), "{id} in {status}");
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workflow_run_without_test_command_repairs_real_libraries() {
    for id in [
        "jpvanhal__inflection-flipcmp-133122bfce",
        "martinblech__xmltodict-offbyone-f1f5945180",
        "tkem__cachetools-flipcmp-ec52e6c4ee",
    ] {
        repair(id).await;
    }
}
