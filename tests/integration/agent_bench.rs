//! Bench (prints numbers; asserts only what must hold): harness overhead per step with a
//! zero-latency model, in the real Docker sandbox. Overhead is everything but model time:
//! building and encoding the request, running the tool in the container, truncation, the
//! trajectory write. Also the request bytes per step, which append-only history keeps growing
//! linearly (each request = the previous one + the new turn).

use std::sync::Mutex;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use patchloop::agent::episode::{self, Budgets, EpisodeConfig, StopReason};
use patchloop::agent::model::openai::OpenAi;
use patchloop::agent::model::{
    AssistantMessage, FinishReason, Model, ModelError, ModelOptions, Request, Response, ToolCall,
    Usage,
};
use patchloop::agent::tools::ToolConfig;
use patchloop::agent::trajectory::Trajectory;
use patchloop::pipeline::testing::DemoImage;
use patchloop::sandbox::container::Container;
use patchloop::sandbox::docker;
use patchloop::sandbox::policy::ContainerPolicy;
use serde_json::json;

/// Answers instantly with a rotating set of cheap calls; encodes each request exactly as the
/// OpenAI adapter would (that cost is harness overhead, so it is timed separately).
struct ZeroLatency {
    encoder: OpenAi,
    n: Mutex<usize>,
    /// (call start, body-encoding time, call end, bytes)
    calls: Mutex<Vec<(Instant, Duration, Instant, usize)>>,
}

#[async_trait]
impl Model for ZeroLatency {
    async fn complete(&self, req: &Request<'_>) -> Result<Response, ModelError> {
        let start = Instant::now();
        let bytes = serde_json::to_vec(&self.encoder.body(req))
            .map(|b| b.len())
            .unwrap_or(0);
        let encode = start.elapsed();
        let n = {
            let mut g = self.n.lock().unwrap();
            *g += 1;
            *g
        };
        let (name, arguments) = match n % 3 {
            0 => ("view_file", json!({"path": "stats/median.py"})),
            1 => ("bash", json!({"command": format!("echo step {n}")})),
            _ => ("search", json!({"pattern": format!("def |{n}")})),
        };
        let call = ToolCall {
            id: Some(format!("c{n}")),
            name: name.into(),
            arguments,
            invalid_arguments: None,
            from_text: false,
        };
        self.calls
            .lock()
            .unwrap()
            .push((start, encode, Instant::now(), bytes));
        Ok(Response {
            message: AssistantMessage {
                content: String::new(),
                tool_calls: vec![call],
                raw: None,
            },
            usage: Usage {
                prompt_tokens: 1,
                completion_tokens: 1,
            },
            finish: FinishReason::ToolCalls,
            bytes_sent: bytes,
        })
    }
    fn spec(&self) -> String {
        "bench:zero-latency".into()
    }
    fn describe(&self) -> String {
        "zero-latency bench model".into()
    }
}

fn pct(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() - 1) as f64 * p).round() as usize]
}

#[tokio::test]
async fn per_step_overhead_with_a_zero_latency_model() {
    let image = DemoImage::prepare("agent-test-bench").await.unwrap();
    let d = docker::connect()
        .await
        .expect("Docker is required for this bench");
    let policy = ContainerPolicy {
        read_only_paths: vec!["tests".into()],
        ..ContainerPolicy::default()
    };
    let container = Container::start(&d, &image.0, &policy, "agent-bench", "episode")
        .await
        .unwrap();
    let model = ZeroLatency {
        encoder: OpenAi::new("http://127.0.0.1:9", "m", ModelOptions::default()).unwrap(),
        n: Mutex::new(0),
        calls: Mutex::new(Vec::new()),
    };
    let steps = 30;
    let cfg = EpisodeConfig {
        budgets: Budgets {
            max_steps: steps,
            context_tokens: 1 << 20,
            ..Budgets::default()
        },
        tools: ToolConfig {
            test_cmd: patchloop::testcmd::TestCommand::parse(
                "python3 -m pytest -q -p no:cacheprovider",
            )
            .unwrap(),
            ..ToolConfig::default()
        },
    };
    let traj_dir = tempfile::tempdir().unwrap();
    let mut traj = Trajectory::create(&traj_dir.path().join("t.jsonl")).unwrap();
    let out = episode::run(&model, &container, "bench", &cfg, &mut traj).await;
    container.remove().await.unwrap();
    assert_eq!(out.stop, StopReason::StepLimit);

    let calls = model.calls.lock().unwrap().clone();
    assert_eq!(calls.len(), steps);
    // Overhead of step i = encoding request i + everything between reply i and request i+1.
    let mut overhead: Vec<Duration> = calls
        .windows(2)
        .map(|w| w[0].1 + w[1].0.duration_since(w[0].2))
        .collect();
    let bytes: Vec<usize> = calls.iter().map(|c| c.3).collect();
    let growth: Vec<usize> = bytes.windows(2).map(|w| w[1] - w[0]).collect();
    let (p50, p90) = (pct(&mut overhead, 0.5), pct(&mut overhead, 0.9));
    println!(
        "BENCH harness overhead per step: p50 {:.1} ms, p90 {:.1} ms over {} steps; request bytes: first {}, last {}, mean growth {} B/step",
        p50.as_secs_f64() * 1e3,
        p90.as_secs_f64() * 1e3,
        overhead.len(),
        bytes[0],
        bytes[bytes.len() - 1],
        growth.iter().sum::<usize>() / growth.len()
    );
    // Of which: the tool's exec in the container (from the trajectory).
    let text = std::fs::read_to_string(traj_dir.path().join("t.jsonl")).unwrap();
    let mut tools_ms: Vec<Duration> = text
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["kind"] == "step")
        .map(|v| Duration::from_millis(v["tools_ms"].as_u64().unwrap_or(0)))
        .collect();
    println!(
        "BENCH of which tool execution in the container: p50 {} ms",
        pct(&mut tools_ms, 0.5).as_millis()
    );
    // Append-only: every request is larger than the previous one.
    assert!(growth.iter().all(|g| *g > 0), "{bytes:?}");
}
