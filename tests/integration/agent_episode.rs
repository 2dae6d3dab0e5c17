//! The episode loop end to end against scripted models and a mock OpenAI server, with the host
//! test double (no Docker): stop reasons, trajectories, nudges, compaction, what was sent.

use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use patchloop::agent::demo;
use patchloop::agent::episode::{self, Budgets, EpisodeConfig, StopReason};
use patchloop::agent::model::openai::OpenAi;
use patchloop::agent::model::scripted::Scripted;
use patchloop::agent::model::{Model, ModelOptions};
use patchloop::agent::testing::HostDir;
use patchloop::agent::tools::ToolConfig;
use patchloop::agent::trajectory::{MemorySink, Trajectory};
use serde_json::{Value, json};
use wiremock::{Mock, MockServer, Request as WmRequest, Respond, ResponseTemplate};

/// A fake test command: JUnit XML saying whether median() averages the middle pair.
const CHECK: &str = r#"for a in "$@" $PYTEST_ADDOPTS; do case "$a" in --junitxml=*) x="${a#--junitxml=}";; esac; done
if grep -q 'ordered\[mid - 1\]' stats/median.py; then
  echo "1 passed"; printf '<testsuites><testsuite name="t" tests="1"><testcase classname="tests.test_median" name="test_even"/></testsuite></testsuites>' > "$x"; exit 0
else
  echo "1 failed"; printf '<testsuites><testsuite name="t" tests="1"><testcase classname="tests.test_median" name="test_even"><failure message="assert 3 == 2.5"/></testcase></testsuite></testsuites>' > "$x"; exit 1
fi
"#;

struct Fixture {
    _dir: tempfile::TempDir,
    sandbox: HostDir,
    cfg: EpisodeConfig,
}

async fn fixture(budgets: Budgets) -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    std::fs::create_dir(&repo).unwrap();
    demo::write_repo(&repo).unwrap();
    let check = dir.path().join("check.sh");
    std::fs::write(&check, CHECK).unwrap();
    let sandbox = HostDir::new(&repo).await.unwrap();
    let cfg = EpisodeConfig {
        budgets,
        tools: ToolConfig {
            test_cmd: patchloop::testcmd::TestCommand::parse(&format!("sh {}", check.display()))
                .unwrap(),
            obs_cap: 2048,
            ..ToolConfig::default()
        },
    };
    Fixture {
        _dir: dir,
        sandbox,
        cfg,
    }
}

fn script(path: &str) -> Scripted {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    Scripted::from_file(&p).unwrap()
}

async fn run(model: &dyn Model, budgets: Budgets) -> (episode::EpisodeOutcome, Vec<Value>) {
    let f = fixture(budgets).await;
    let sink = MemorySink::default();
    let mut traj = Trajectory::to_writer(Box::new(sink.clone()));
    let out = episode::run(
        model,
        &f.sandbox,
        "Fix the failing test.",
        &f.cfg,
        &mut traj,
    )
    .await;
    (out, sink.lines())
}

fn steps(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["kind"] == "step").collect()
}

#[tokio::test]
async fn scripted_demo_fixes_the_bug_and_submits() {
    let (out, lines) = run(
        &script("examples/scripted/demo-fix.yaml"),
        Budgets::default(),
    )
    .await;
    assert_eq!(out.stop, StopReason::Submitted, "{}", out.detail);
    assert!(
        out.patch
            .contains("+    return (ordered[mid - 1] + ordered[mid]) / 2"),
        "{}",
        out.patch
    );
    assert_eq!(out.steps, 5);
    let s = steps(&lines);
    assert_eq!(s.len(), 5);
    let first_obs = s[0]["calls"][0]["observation"].as_str().unwrap();
    assert!(first_obs.contains("0 passed, 1 failed"), "{first_obs}");
    assert!(
        first_obs.contains("Failing: tests/test_median.py::test_even"),
        "{first_obs}"
    );
    assert!(
        s[3]["calls"][0]["observation"]
            .as_str()
            .unwrap()
            .contains("1 passed, 0 failed")
    );
    let last = lines.last().unwrap();
    assert_eq!(last["kind"], "final");
    assert_eq!(last["stop_reason"], "submitted");
    assert_eq!(last["patch"].as_str().unwrap(), out.patch);
}

#[tokio::test]
async fn the_same_call_is_nudged_at_3_and_stopped_at_5() {
    let (out, lines) = run(&script("examples/scripted/loop.yaml"), Budgets::default()).await;
    assert_eq!(out.stop, StopReason::LoopDetected);
    let s = steps(&lines);
    assert_eq!(s.len(), 5);
    for (i, step) in s.iter().enumerate() {
        let obs = step["calls"][0]["observation"].as_str().unwrap();
        assert_eq!(
            obs.contains("times in the last few steps"),
            i == 2 || i == 3,
            "step {i}: {obs}"
        );
    }
    assert_eq!(lines.last().unwrap()["stop_reason"], "loop_detected");
}

#[tokio::test]
async fn giant_output_is_truncated_and_prose_replies_end_in_format_errors() {
    let (out, lines) = run(&script("examples/scripted/flood.yaml"), Budgets::default()).await;
    assert_eq!(out.stop, StopReason::FormatErrors);
    let s = steps(&lines);
    let obs = s[0]["calls"][0]["observation"].as_str().unwrap();
    assert!(obs.len() < 4096, "{}", obs.len());
    assert!(obs.contains("output truncated"), "{obs}");
    assert_eq!(s.len(), 4, "1 flood + 3 prose replies");
}

#[tokio::test]
async fn malformed_calls_become_observations_then_format_errors() {
    let (out, lines) = run(
        &script("examples/scripted/malformed.yaml"),
        Budgets::default(),
    )
    .await;
    assert_eq!(out.stop, StopReason::FormatErrors, "{}", out.detail);
    let s = steps(&lines);
    assert_eq!(s.len(), 3);
    assert!(
        s[0]["calls"][0]["observation"]
            .as_str()
            .unwrap()
            .contains("could not be parsed")
    );
    assert_eq!(s[0]["calls"][0]["from_text"], true);
    assert!(
        s[1]["calls"][0]["observation"]
            .as_str()
            .unwrap()
            .contains("could not be parsed")
    );
    assert!(
        s[2]["calls"][0]["observation"]
            .as_str()
            .unwrap()
            .contains("Invalid arguments for `view_file`")
    );
}

#[tokio::test]
async fn endless_steps_end_at_the_step_limit() {
    let b = Budgets {
        max_steps: 6,
        ..Budgets::default()
    };
    let (out, lines) = run(&script("examples/scripted/endless.yaml"), b).await;
    assert_eq!(out.stop, StopReason::StepLimit);
    assert_eq!(steps(&lines).len(), 6);
    assert_eq!(lines.last().unwrap()["stop_reason"], "step_limit");
}

#[tokio::test]
async fn token_time_and_cost_budgets() {
    let model = Scripted::from_yaml(
        "turns:\n  - tool_calls: [{name: bash, arguments: {command: 'echo a'}}]\n    usage: {prompt_tokens: 600, completion_tokens: 10}\n    repeat: 2\n  - tool_calls: [{name: diff}]\n",
        "inline",
    )
    .unwrap();
    let b = Budgets {
        max_tokens: 1000,
        ..Budgets::default()
    };
    let (out, _) = run(&model, b).await;
    assert_eq!(out.stop, StopReason::TokenLimit);
    assert_eq!(out.steps, 2);
    assert_eq!(out.usage.total(), 1220);

    let b = Budgets {
        max_wall: Duration::ZERO,
        ..Budgets::default()
    };
    let (out, lines) = run(&script("examples/scripted/endless.yaml"), b).await;
    assert_eq!(out.stop, StopReason::TimeLimit);
    assert_eq!(lines.last().unwrap()["stop_reason"], "time_limit");
}

#[tokio::test]
async fn refusal_and_an_exhausted_script() {
    let m = Scripted::from_yaml(
        "turns:\n  - content: \"I'm sorry, but I can't help with that.\"\n",
        "inline",
    )
    .unwrap();
    let (out, _) = run(&m, Budgets::default()).await;
    assert_eq!(out.stop, StopReason::ModelRefusal);
    let m = Scripted::from_yaml("turns:\n  - tool_calls: [{name: diff}]\n", "inline").unwrap();
    let (out, lines) = run(&m, Budgets::default()).await;
    assert_eq!(out.stop, StopReason::Error);
    assert!(out.detail.contains("no turns left"), "{}", out.detail);
    assert_eq!(lines.last().unwrap()["stop_reason"], "error");
}

/// Replies with a distinct bash call every time, or a summary when asked without tools.
struct Distinct(AtomicUsize);

impl Respond for Distinct {
    fn respond(&self, req: &WmRequest) -> ResponseTemplate {
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        let n = self.0.fetch_add(1, Ordering::SeqCst);
        let message = if body.get("tools").is_none() {
            json!({"role": "assistant", "content": format!("SUMMARY {n}: ran echo commands")})
        } else {
            json!({"role": "assistant", "content": null, "tool_calls": [{"id": format!("call_{n}"), "type": "function",
                "function": {"name": "bash", "arguments": json!({"command": format!("seq 1 40; echo {n}")}).to_string()}}]})
        };
        ResponseTemplate::new(200).set_body_json(json!({
            "id": "x", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}))
    }
}

/// No assistant tool call without its result, and no result without its call.
fn assert_no_orphans(messages: &[Value]) {
    let mut open: Vec<String> = Vec::new();
    for m in messages {
        if m["role"] == "assistant" {
            assert!(open.is_empty(), "calls without results: {open:?}");
            open = m["tool_calls"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|c| c["id"].as_str().unwrap().to_string())
                        .collect()
                })
                .unwrap_or_default();
        } else if m["role"] == "tool" {
            let id = m["tool_call_id"].as_str().unwrap().to_string();
            assert!(open.contains(&id), "result {id} without its call");
            open.retain(|o| *o != id);
        }
    }
}

#[tokio::test]
async fn compaction_keeps_history_append_only_and_never_orphans_a_call() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Distinct(AtomicUsize::new(0)))
        .mount(&server)
        .await;
    let model = OpenAi::new(&server.uri(), "m", ModelOptions::default()).unwrap();
    let b = Budgets {
        max_steps: 20,
        context_tokens: 1200,
        ..Budgets::default()
    };
    let (out, lines) = run(&model, b).await;
    assert_eq!(out.stop, StopReason::StepLimit);
    assert!(
        lines.iter().any(|l| l["kind"] == "compaction"),
        "no compaction happened"
    );

    let bodies: Vec<Value> = server
        .received_requests()
        .await
        .unwrap()
        .iter()
        .map(|r| serde_json::from_slice(&r.body).unwrap())
        .collect();
    let with_tools: Vec<&Value> = bodies.iter().filter(|b| b.get("tools").is_some()).collect();
    let summaries = bodies.len() - with_tools.len();
    assert!(summaries >= 1);
    let mut fresh_starts = 0;
    for pair in with_tools.windows(2) {
        let (a, b) = (
            pair[0]["messages"].as_array().unwrap(),
            pair[1]["messages"].as_array().unwrap(),
        );
        assert_no_orphans(a);
        assert_no_orphans(b);
        if b.len() > a.len() && b[..a.len()] == a[..] {
            continue; // append-only
        }
        // Otherwise a compaction started a fresh history: prompt, task, summary.
        fresh_starts += 1;
        assert_eq!(b[0], a[0]);
        assert_eq!(b[1], a[1]);
        assert!(
            b[2]["content"].as_str().unwrap().contains("SUMMARY"),
            "{}",
            b[2]
        );
    }
    assert_eq!(fresh_starts, summaries);
}

/// Issue #42: every model call goes through the ledger — the loop's steps and its compaction
/// summaries alike — so the ledger's calls are the server's requests, and their tokens are
/// charged.
#[tokio::test]
async fn the_ledger_counts_every_request_the_server_received_compaction_included() {
    use patchloop::agent::attempt::{Ledger, Metered};
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST"))
        .respond_with(Distinct(AtomicUsize::new(0)))
        .mount(&server)
        .await;
    let model = OpenAi::new(&server.uri(), "m", ModelOptions::default()).unwrap();
    let b = Budgets {
        max_steps: 12,
        context_tokens: 1200,
        ..Budgets::default()
    };
    let f = fixture(b.clone()).await;
    let sink = MemorySink::default();
    let mut traj = Trajectory::to_writer(Box::new(sink.clone()));
    let ledger = Ledger::new(b);
    let out = episode::run_on(
        &Metered::new(&model, &ledger, 0),
        &f.sandbox,
        "Fix the failing test.",
        &f.cfg,
        &mut traj,
    )
    .await;
    let lines = sink.lines();
    assert!(
        lines.iter().any(|l| l["kind"] == "compaction"),
        "no compaction happened"
    );
    let requests = server.received_requests().await.unwrap().len();
    let spent = ledger.total();
    assert_eq!(spent.calls, requests, "{out:?}");
    assert_eq!(out.usage.total(), spent.usage.total());
    assert!(spent.usage.total() > 0);
}
