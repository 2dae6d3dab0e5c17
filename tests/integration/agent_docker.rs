//! End to end on the real Docker sandbox: the scripted demo model fixes the planted bug in a
//! hardened container; an adversarial script (giant output, editing the read-only tests, prose)
//! ends with the right stop reason and a full trajectory. Needs Docker: fails loudly without it.
//!
//! The image is the demo repository prepared by `sandbox::prepare`, as `patchloop demo` does.

use patchloop::agent::demo;
use patchloop::agent::episode::{Budgets, EpisodeConfig, StopReason};
use patchloop::agent::model::scripted::Scripted;
use patchloop::agent::tools::ToolConfig;
use patchloop::pipeline::testing::DemoImage;
use patchloop::pipeline::{self, Plan};
use patchloop::sandbox::docker;
use serde_json::Value;

use crate::agent_common::jsonl;

async fn build_demo_image() -> DemoImage {
    DemoImage::prepare("agent-test-docker")
        .await
        .expect("building the demo image")
}

fn plan(out: &std::path::Path, test_cmd: &patchloop::testcmd::TestCommand, run_id: &str) -> Plan {
    let mut p = Plan::new(
        EpisodeConfig {
            budgets: Budgets::default(),
            tools: ToolConfig {
                test_cmd: test_cmd.clone(),
                ..ToolConfig::default()
            },
        },
        out,
        run_id,
    );
    p.statement = Some("median() is wrong for lists of even length".into());
    // One run before and after: the scripted fix must also pass the fresh-container verifier.
    p.verify_reruns = 1;
    p
}

#[tokio::test]
async fn scripted_runs_in_the_real_sandbox() {
    let guard = build_demo_image().await;
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let image = pipeline::inspect_image(&d, &guard.0).await.unwrap();
    assert_eq!(image.tests_dirs, vec!["tests".to_string()]);
    let out = tempfile::tempdir().unwrap();

    // 1. The demo script fixes the planted bug.
    let model = Scripted::from_yaml(demo::SCRIPT, "demo-fix.yaml").unwrap();
    let o = pipeline::run(
        &d,
        &image,
        &model,
        &plan(out.path(), &image.test_cmd, "agent-test-demo"),
    )
    .await
    .unwrap();
    assert!(o.fixed(), "{}", o.one_line());
    let receipt = o
        .receipt
        .as_ref()
        .expect("a fixed patch carries the verifier's receipt");
    assert_eq!(receipt.decision.verdict.as_str(), "verified");
    assert!(out.path().join("receipt.md").is_file());
    assert_eq!(o.stop, Some(StopReason::Submitted));
    assert!(
        o.patch
            .contains("+    return (ordered[mid - 1] + ordered[mid]) / 2"),
        "{}",
        o.patch
    );
    assert!(o.one_line().starts_with("fixed:"), "{}", o.one_line());
    assert!(o.one_line().contains("scripted"), "{}", o.one_line());
    assert_eq!(
        std::fs::read_to_string(out.path().join("patch.diff")).unwrap(),
        o.patch
    );
    let l = jsonl(&out.path().join("trajectory.jsonl"));
    assert_eq!(l[0]["kind"], "header");
    assert_eq!(l[0]["format_version"], 1);
    assert_eq!(l[0]["container_policy"]["read_only_paths"][0], "tests");
    assert!(
        l[0]["task"]
            .as_str()
            .unwrap()
            .contains("test_even_length_averages_the_middle_pair"),
        "{}",
        l[0]["task"]
    );
    let task = l[0]["task"].as_str().unwrap();
    assert!(task.contains("Problem statement"));
    // The first prompt carries the failing test function and the code it runs, path:line.
    assert!(task.contains("Failing-code context"), "{task}");
    assert!(task.contains("Start by reading the code the failing test runs: {\"name\": \"view_file\", \"arguments\": {\"path\": \"stats/median.py\""), "{task}");
    assert_eq!(l.iter().filter(|x| x["kind"] == "step").count(), 5);
    let step1 = l.iter().find(|x| x["kind"] == "step").unwrap();
    let first = step1["calls"][0]["observation"].as_str().unwrap();
    assert!(first.contains("3 passed, 1 failed"), "{first}");
    let last_final = l.iter().rev().find(|x| x["kind"] == "final").unwrap();
    assert_eq!(last_final["stop_reason"], "submitted");
    // The default strategies ran: the script has no candidates, so they were empty replies
    // (unparsed), then the loop fixed it; the search tree says so.
    let ids: Vec<&str> = l
        .iter()
        .filter(|x| x["kind"] == "node" && x["node"] == "attempt")
        .map(|x| x["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        ["t0.candidates", "t0.candidates", "t0.loop", "t0.loop"]
    );

    // 2. Adversarial: a flood, an edit of the read-only tests, then prose until format_errors.
    let evil = r#"
turns:
  - tool_calls: [{name: bash, arguments: {command: "yes patchloop | head -c 20000000"}}]
  - tool_calls:
      - name: str_replace
        arguments: {path: tests/test_median.py, old_str: "== 2.5", new_str: "== 3"}
  - content: "The tests are probably wrong."
    repeat: 3
"#;
    let model = Scripted::from_yaml(evil, "evil").unwrap();
    let out2 = tempfile::tempdir().unwrap();
    let o = pipeline::run(
        &d,
        &image,
        &model,
        &plan(out2.path(), &image.test_cmd, "agent-test-evil"),
    )
    .await
    .unwrap();
    assert!(!o.fixed());
    assert_eq!(o.stop, Some(StopReason::FormatErrors));
    assert!(
        o.patch.is_empty(),
        "the read-only tests must be unchanged: {}",
        o.patch
    );
    let l = jsonl(&out2.path().join("trajectory.jsonl"));
    let steps: Vec<&Value> = l.iter().filter(|x| x["kind"] == "step").collect();
    let flood = steps[0]["calls"][0]["observation"].as_str().unwrap();
    assert!(
        flood.contains("output truncated") && flood.len() < 10_000,
        "{}",
        flood.len()
    );
    let cheat = steps[1]["calls"][0]["observation"].as_str().unwrap();
    // Refused before writing, with where the code under test is (the failing-code context).
    assert!(
        cheat.contains("Not edited") && cheat.contains("Read-only file system"),
        "{cheat}"
    );
    assert!(cheat.contains("- stats/median.py:"), "{cheat}");
    assert_eq!(
        l.iter().rev().find(|x| x["kind"] == "final").unwrap()["stop_reason"],
        "format_errors"
    );
    assert!(
        o.one_line().starts_with("not fixed: no patch"),
        "{}",
        o.one_line()
    );

    // 3. Filling the workspace quota (docs/security.md D4) ends the episode: many files, each far
    //    below the fsize limit, into a 16 MiB workspace.
    let fill = r#"
turns:
  - tool_calls:
      - name: bash
        arguments: {command: "for i in $(seq 40); do dd if=/dev/zero of=fill$i bs=1M count=1 2>&1 || break; done"}
  - tool_calls: [{name: submit, arguments: {}}]
"#;
    let model = Scripted::from_yaml(fill, "fill").unwrap();
    let out3 = tempfile::tempdir().unwrap();
    let mut p = plan(out3.path(), &image.test_cmd, "agent-test-fill");
    p.policy.workspace_bytes = 16 << 20;
    let o = pipeline::run(&d, &image, &model, &p).await.unwrap();
    assert_eq!(o.stop, Some(StopReason::QuotaExceeded));
    assert!(!o.fixed(), "{}", o.one_line());
    let l = jsonl(&out3.path().join("trajectory.jsonl"));
    let step1 = l.iter().find(|x| x["kind"] == "step").unwrap();
    let obs = step1["calls"][0]["observation"].as_str().unwrap();
    assert!(
        obs.contains("No space left") && obs.contains("workspace quota (16 MiB) is full"),
        "{obs}"
    );
    assert_eq!(
        l.iter().rev().find(|x| x["kind"] == "final").unwrap()["stop_reason"],
        "quota_exceeded"
    );
    drop(guard);
}

/// Named targets: the demo's failing test is the target, a second test that fails for an
/// environmental reason is pre-existing. The scripted fix is verified although the
/// pre-existing failure remains, the model is told which failure is not its job, and the
/// receipt's fail-to-pass set is the named test alone.
#[tokio::test]
async fn named_targets_leave_pre_existing_failures_alone() {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("agent-test-preexisting");
    demo::write_repo(&repo).unwrap();
    std::fs::write(
        repo.join("tests/test_env.py"),
        "import os\n\n\ndef test_needs_a_service():\n    assert os.environ.get(\"PATCHLOOP_NEVER_SET\"), \"service not configured\"\n",
    )
    .unwrap();
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let image = pipeline::prepare_image(&d, &repo, None, None)
        .await
        .unwrap();
    let guard = DemoImage(image.tag.clone());
    let out = tempfile::tempdir().unwrap();
    let model = Scripted::from_yaml(demo::SCRIPT, "demo-fix.yaml").unwrap();
    let mut p = plan(out.path(), &image.test_cmd, "agent-test-preexisting");
    p.base_repo = Some(repo.clone());
    p.targets = pipeline::TargetSpec::named(vec!["tests/test_median.py".into()]);
    let o = pipeline::run(&d, &image, &model, &p).await.unwrap();
    assert_eq!(
        o.targets.pre_existing,
        [patchloop::testid::TestId::new(
            "tests/test_env.py::test_needs_a_service"
        )]
    );
    assert_eq!(o.targets.fail_to_pass.len(), 1, "{:?}", o.targets);
    assert!(
        o.targets.fail_to_pass[0]
            .as_str()
            .starts_with("tests/test_median.py::")
    );
    assert!(o.fixed(), "{}", o.one_line());
    let receipt = o.receipt.as_ref().unwrap();
    assert_eq!(receipt.decision.verdict.as_str(), "verified");
    // The receipt records the three groups: the target, the pre-existing failure, and the
    // pass-to-pass tests it enforced.
    assert_eq!(
        receipt.decision.pre_existing_failures,
        ["tests/test_env.py::test_needs_a_service"]
    );
    assert!(!receipt.decision.pass_to_pass.is_empty());
    let l = jsonl(&out.path().join("trajectory.jsonl"));
    let task = l[0]["task"].as_str().unwrap();
    assert!(
        task.contains("not your task") && task.contains("test_needs_a_service"),
        "{task}"
    );
    drop(guard);
}
