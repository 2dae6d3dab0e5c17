//! One episode: the agent loop, top to bottom.
//!
//! `for step in 0..max_steps`: check the budgets, compact near the context limit, ask the model,
//! run its tool calls in the sandbox, record the step. Every exit goes through [`finish`] with a
//! named [`StopReason`]. The history is append-only (the provider's raw assistant message is
//! replayed as received) until a compaction starts a fresh one.

use std::time::{Duration, Instant};

use serde::Serialize;
use serde_json::{Value, json};

use crate::agent::attempt::{Ledger, Metered};
use crate::agent::compact;
use crate::agent::model::{
    FinishReason, Message, Model, ModelError, Request, ToolCall, ToolSpec, Usage,
};
use crate::agent::tools::{self, ToolConfig};
use crate::agent::trajectory::{CallRecord, FinalRecord, StepRecord, Trajectory};
use crate::sandbox::Sandbox;

const SYSTEM_PROMPT: &str = include_str!("prompts/system.md");
const COMPACT_PROMPT: &str = include_str!("prompts/compact.md");
const NO_TOOL_CALL: &str = include_str!("prompts/no_tool_call.md");
const REPEAT_NUDGE: &str = include_str!("prompts/repeat.md");

/// The same action this many times (within the last [`LOOP_WINDOW`] steps) gets a nudge...
pub const NUDGE_AFTER_REPEATS: usize = 3;
/// ...and this many stops the episode with `loop_detected`.
pub const STOP_AFTER_REPEATS: usize = 5;

pub use crate::agent::attempt::StopReason;
pub use crate::config::Budgets;

fn as_secs<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// What this episode has spent (the ledger holds the repair's totals and decides the caps).
#[derive(Debug, Clone, Default)]
pub struct Spent {
    pub steps: usize,
    pub usage: Usage,
    pub cost_usd: f64,
    pub wall: Duration,
    /// Time spent waiting for the model (the step replies; compaction's summary is not timed).
    pub model: Duration,
}

impl Spent {
    /// What the ledger booked since `before` (this episode's calls: the ledger is the only
    /// account), with the steps and the wall time.
    fn of(
        ledger: &Ledger,
        before: &crate::agent::attempt::Spend,
        steps: usize,
        wall: Duration,
    ) -> Spent {
        let d = ledger.total().since(before);
        Spent {
            steps,
            usage: d.usage,
            cost_usd: d.cost_usd,
            wall,
            model: d.model,
        }
    }
}

/// How the steps ended, before [`finish`] takes the patch.
struct Exit {
    stop: StopReason,
    detail: String,
    /// Steps completed.
    steps: usize,
    infrastructure: bool,
}

impl Exit {
    fn new(stop: StopReason, detail: impl Into<String>, steps: usize) -> Exit {
        Exit {
            stop,
            detail: detail.into(),
            steps,
            infrastructure: false,
        }
    }
}

#[derive(Debug, Clone)]
pub struct EpisodeConfig {
    pub budgets: Budgets,
    pub tools: ToolConfig,
}

/// The result of an episode.
#[derive(Debug, Clone, Serialize)]
pub struct EpisodeOutcome {
    pub stop: StopReason,
    pub detail: String,
    /// The workspace diff at the end (empty if none or if it could not be taken).
    pub patch: String,
    pub steps: usize,
    pub usage: Usage,
    pub cost_usd: f64,
    #[serde(serialize_with = "as_secs")]
    pub wall: Duration,
    /// Time spent waiting for the model.
    #[serde(serialize_with = "as_secs")]
    pub model_wall: Duration,
    /// The model server or the sandbox failed (not the model's work): callers report it as an
    /// infrastructure error (exit 2), not as "no fix".
    pub infrastructure: bool,
}

/// Loop detection: how often the current step's action (its calls, in order) occurred among
/// the last [`LOOP_WINDOW`] steps. Counting within a window, not only in a row, also catches
/// models that cycle (edit, submit, edit, submit, ...).
#[derive(Default)]
struct Repeats {
    recent: std::collections::VecDeque<String>,
}

/// Steps remembered by loop detection.
pub const LOOP_WINDOW: usize = 10;

impl Repeats {
    fn see(&mut self, calls: &[ToolCall]) -> usize {
        let key: String = calls
            .iter()
            .map(|c| format!("{}\u{0}{}\u{1}", c.name, c.arguments))
            .collect();
        if self.recent.len() == LOOP_WINDOW {
            self.recent.pop_front();
        }
        self.recent.push_back(key.clone());
        self.recent.iter().filter(|k| **k == key).count()
    }
}

/// The system prompt and task: the first two messages of every history.
pub fn initial_history(task: &str) -> Vec<Message> {
    vec![Message::system(SYSTEM_PROMPT), Message::user(task)]
}

/// Run one episode of `model` on `task` in `sandbox`, held to `cfg.budgets` alone.
pub async fn run(
    model: &dyn Model,
    sandbox: &dyn Sandbox,
    task: &str,
    cfg: &EpisodeConfig,
    traj: &mut Trajectory,
) -> EpisodeOutcome {
    let ledger = Ledger::new(cfg.budgets.clone());
    run_on(&Metered::new(model, &ledger, 0), sandbox, task, cfg, traj).await
}

/// Run one episode as one attempt of a repair: the wall, token and dollar caps are the
/// ledger's (what the repair has left), the step cap is `cfg.budgets.max_steps`.
pub async fn run_on(
    model: &Metered<'_>,
    sandbox: &dyn Sandbox,
    task: &str,
    cfg: &EpisodeConfig,
    traj: &mut Trajectory,
) -> EpisodeOutcome {
    let started = Instant::now();
    let ledger = model.ledger();
    let before = ledger.total();
    let exit = steps(model, sandbox, task, cfg, traj).await;
    // Spend is settled here, once: the steps the loop completed, and what the ledger booked.
    for _ in 0..exit.steps {
        ledger.step(model.tier());
    }
    let spent = Spent::of(ledger, &before, exit.steps, started.elapsed());
    finish(exit, sandbox, traj, &spent).await
}

/// The loop itself; every way out is an [`Exit`] with a named stop reason.
async fn steps(
    model: &Metered<'_>,
    sandbox: &dyn Sandbox,
    task: &str,
    cfg: &EpisodeConfig,
    traj: &mut Trajectory,
) -> Exit {
    let ledger = model.ledger();
    let before = ledger.total();
    let specs: Vec<ToolSpec> = tools::specs();
    let budgets = &cfg.budgets;
    let mut history = initial_history(task);
    let mut format_errors = 0usize;
    let mut repeats = Repeats::default();

    for step in 0..budgets.max_steps {
        if let Some(reason) = ledger.check() {
            return Exit::new(reason, "budget used up before the next model call", step);
        }

        // Near the context limit: summarise, then start a fresh history.
        if compact::needs_compaction(&history, budgets.context_tokens) {
            history = compaction(model, &history, budgets, traj, step).await;
        }

        // Ask the model (the metered call is bounded by the wall time left).
        let model_start = Instant::now();
        let request = Request {
            messages: &history,
            tools: &specs,
            sample: None,
        };
        let response = match model.complete(&request).await {
            Err(ModelError::Budget(_)) => {
                return Exit::new(
                    ledger.check().unwrap_or(StopReason::TimeLimit),
                    "the model call outlived the budget",
                    step,
                );
            }
            Err(ModelError::ContextExceeded(msg)) => {
                // The server says it no longer fits: compact now and try again next step.
                traj.event("context_exceeded", &json!({"step": step, "message": msg}));
                history = compaction(model, &history, budgets, traj, step).await;
                continue;
            }
            Err(e) => {
                let mut exit = Exit::new(StopReason::Error, e.to_string(), step);
                // A scripted model running out of turns is the model failing, not the setup.
                exit.infrastructure = !matches!(e, ModelError::ScriptExhausted(_));
                return exit;
            }
            Ok(r) => r,
        };
        let model_ms = model_start.elapsed().as_millis() as u64;
        let so_far = ledger.total().since(&before);

        let assistant = response.message.clone();
        history.push(Message::Assistant(assistant.clone()));
        let mut record = StepRecord {
            step,
            assistant_content: assistant.content.clone(),
            raw: assistant.raw.clone(),
            finish: format!("{:?}", response.finish),
            calls: Vec::new(),
            model_ms,
            tools_ms: 0,
            prompt_tokens: response.usage.prompt_tokens,
            completion_tokens: response.usage.completion_tokens,
            total_tokens: so_far.usage.total(),
            cost_usd: so_far.cost_usd,
            bytes_sent: response.bytes_sent,
            notes: Vec::new(),
        };

        // A reply without a tool call: a refusal ends the episode, anything else is a format error.
        if assistant.tool_calls.is_empty() {
            traj.step(&record);
            if response.finish == FinishReason::Refusal || looks_like_refusal(&assistant.content) {
                return Exit::new(StopReason::ModelRefusal, clip(&assistant.content), step + 1);
            }
            format_errors += 1;
            if format_errors >= budgets.max_format_errors {
                return Exit::new(
                    StopReason::FormatErrors,
                    "replies without a usable tool call",
                    step + 1,
                );
            }
            history.push(Message::user(NO_TOOL_CALL));
            continue;
        }

        // Run every call; each gets exactly one result, in order.
        let tools_start = Instant::now();
        let mut submitted = false;
        let repeat = repeats.see(&assistant.tool_calls);
        let last_call = assistant.tool_calls.len() - 1;
        for (i, call) in assistant.tool_calls.iter().enumerate() {
            let call_start = Instant::now();
            let mut text = if let Some(err) = &call.invalid_arguments {
                format_errors += 1;
                format!(
                    "Your call to `{}` could not be parsed: {err}. Send the arguments as a JSON object.",
                    call.name
                )
            } else if submitted {
                "Not run: you already submitted.".to_string()
            } else {
                match tools::execute(sandbox, &cfg.tools, &call.name, &call.arguments).await {
                    Ok(obs) => {
                        format_errors = if obs.malformed { format_errors + 1 } else { 0 };
                        submitted = obs.submitted;
                        obs.text
                    }
                    Err(e) => {
                        // The sandbox itself failed: record what we have and stop.
                        history.push(Message::tool_result(call, format!("sandbox failure: {e}")));
                        traj.step(&record);
                        let mut exit =
                            Exit::new(StopReason::Error, format!("sandbox failure: {e}"), step + 1);
                        exit.infrastructure = true;
                        return exit;
                    }
                }
            };
            if i == last_call && (NUDGE_AFTER_REPEATS..STOP_AFTER_REPEATS).contains(&repeat) {
                let nudge = repeat_nudge(repeat, call, &cfg.tools.focus);
                record.notes.push(format!("repeat nudge ({repeat})"));
                text = format!("{text}\n\n{nudge}");
            }
            history.push(Message::tool_result(call, text.clone()));
            record.calls.push(CallRecord {
                name: call.name.clone(),
                arguments: call.arguments.clone(),
                id: call.id.clone(),
                from_text: call.from_text,
                invalid_arguments: call.invalid_arguments.clone(),
                observation: text,
                duration_ms: call_start.elapsed().as_millis() as u64,
            });
        }
        record.tools_ms = tools_start.elapsed().as_millis() as u64;
        traj.step(&record);

        let done = step + 1;
        if sandbox.workspace_full() {
            return Exit::new(
                StopReason::QuotaExceeded,
                "a step filled the workspace quota",
                done,
            );
        }
        if submitted {
            return Exit::new(StopReason::Submitted, "the model submitted its patch", done);
        }
        if repeat >= STOP_AFTER_REPEATS {
            return Exit::new(
                StopReason::LoopDetected,
                format!("the same action {repeat} times within {LOOP_WINDOW} steps"),
                done,
            );
        }
        if format_errors >= budgets.max_format_errors {
            return Exit::new(StopReason::FormatErrors, "malformed tool calls", done);
        }
    }
    Exit::new(
        StopReason::StepLimit,
        format!("{} steps", budgets.max_steps),
        budgets.max_steps,
    )
}

/// The only way out of [`run`]: take the patch, write the final trajectory line.
async fn finish(
    exit: Exit,
    sandbox: &dyn Sandbox,
    traj: &mut Trajectory,
    spent: &Spent,
) -> EpisodeOutcome {
    let (patch, detail) = match sandbox.diff().await {
        Ok(p) => (p, exit.detail),
        Err(e) => (
            String::new(),
            format!("{}; the final diff failed: {e}", exit.detail),
        ),
    };
    let stop = exit.stop;
    let outcome = EpisodeOutcome {
        stop,
        detail,
        patch,
        steps: spent.steps,
        usage: spent.usage,
        cost_usd: spent.cost_usd,
        wall: spent.wall,
        model_wall: spent.model,
        infrastructure: exit.infrastructure,
    };
    traj.finish(&FinalRecord {
        stop_reason: stop.as_str().to_string(),
        detail: outcome.detail.clone(),
        steps: outcome.steps,
        total_tokens: outcome.usage.total(),
        cost_usd: outcome.cost_usd,
        wall_ms: outcome.wall.as_millis() as u64,
        patch: outcome.patch.clone(),
    });
    outcome
}

/// Ask the model for a progress summary (no tools), then build the fresh history. If the model
/// cannot answer, fall back to a mechanical summary: compaction never fails.
async fn compaction(
    model: &Metered<'_>,
    history: &[Message],
    budgets: &Budgets,
    traj: &mut Trajectory,
    step: usize,
) -> Vec<Message> {
    let mut ask: Vec<Message> = history.to_vec();
    ask.push(Message::user(COMPACT_PROMPT));
    let summary = match model
        .complete(&Request {
            messages: &ask,
            tools: &[],
            sample: None,
        })
        .await
    {
        Ok(r) if !r.message.content.trim().is_empty() => r.message.content,
        Ok(_) | Err(_) => compact::mechanical_summary(history),
    };
    let fresh = compact::compact(history, &summary, budgets.context_tokens);
    traj.event(
        "compaction",
        &json!({"step": step, "before_messages": history.len(), "after_messages": fresh.len(),
                "before_tokens_est": compact::estimate_tokens(history),
                "after_tokens_est": compact::estimate_tokens(&fresh), "summary": summary}),
    );
    fresh
}

/// The observation added to a repeated action: it will not change, and where to go instead
/// (the code the failing-code context names, not the call being repeated). Pure.
pub fn repeat_nudge(count: usize, call: &ToolCall, focus: &crate::agent::context::Focus) -> String {
    let r#where = if focus.code.is_empty() {
        "Read another part of the code, edit the code with str_replace, run the tests, or submit."
            .to_string()
    } else {
        let viewed = (call.name == "view_file")
            .then(|| call.arguments["path"].as_str())
            .flatten()
            .map(|p| {
                let start = call.arguments["start_line"].as_u64().map(|n| n as usize);
                (p, start)
            });
        focus.where_to_look(viewed)
    };
    REPEAT_NUDGE
        .trim_end()
        .replace("{count}", &count.to_string())
        .replace("{where}", &r#where)
}

/// Plain-text refusals ("I can't help with that"), for servers without a refusal field.
pub fn looks_like_refusal(content: &str) -> bool {
    let c = content.to_lowercase();
    let c = c.trim();
    c.len() < 400
        && [
            "i can't assist",
            "i cannot assist",
            "i can't help",
            "i cannot help",
            "i won't",
            "i'm sorry, but i can",
        ]
        .iter()
        .any(|p| c.contains(p))
}

fn clip(s: &str) -> String {
    s.chars().take(300).collect()
}

/// Config as logged in the trajectory header.
pub fn config_value(cfg: &EpisodeConfig) -> Value {
    json!({
        "budgets": cfg.budgets,
        "tools": {
            "test_cmd": cfg.tools.test_cmd,
            "obs_cap": cfg.tools.obs_cap,
            "exec_timeout_s": cfg.tools.exec_timeout.as_secs(),
            "test_timeout_s": cfg.tools.test_timeout.as_secs(),
            "context_budget": cfg.tools.context_budget,
            "long_file_lines": cfg.tools.long_file_lines,
            "focus_code": cfg.tools.focus.code.iter().map(|l| l.label()).collect::<Vec<_>>(),
        },
        "nudge_after_repeats": NUDGE_AFTER_REPEATS,
        "stop_after_repeats": STOP_AFTER_REPEATS,
        "loop_window": LOOP_WINDOW,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loops_and_cycles_are_counted_within_the_window() {
        let call = |n: &str| ToolCall {
            id: None,
            name: n.into(),
            arguments: json!({}),
            invalid_arguments: None,
            from_text: false,
        };
        let mut r = Repeats::default();
        let seq: Vec<usize> = [
            "edit", "submit", "edit", "submit", "edit", "submit", "edit", "submit", "edit",
        ]
        .iter()
        .map(|n| r.see(&[call(n)]))
        .collect();
        assert_eq!(seq, [1, 1, 2, 2, 3, 3, 4, 4, 5]);
        let mut r = Repeats::default();
        for i in 0..20 {
            assert_eq!(
                r.see(&[call(&format!("c{i}"))]),
                1,
                "distinct actions never count"
            );
        }
    }

    #[test]
    fn refusals() {
        assert!(looks_like_refusal("I'm sorry, but I can't help with that."));
        assert!(!looks_like_refusal("Let me look at median.py"));
    }

    #[test]
    fn the_repeat_nudge_points_at_the_code_not_the_repeated_call() {
        use crate::agent::context::{Focus, Location};
        let call = |args: Value| ToolCall {
            id: None,
            name: "view_file".into(),
            arguments: args,
            invalid_arguments: None,
            from_text: false,
        };
        let plain = repeat_nudge(3, &call(json!({"path": "tests/t.py"})), &Focus::default());
        assert!(plain.contains("3 times in the last few steps"), "{plain}");
        assert!(plain.contains("str_replace"), "{plain}");
        let focus = Focus {
            code: vec![Location {
                path: "shop/prices.py".into(),
                start: 4,
                end: 7,
                name: "parse_amount".into(),
                frame_line: Some(7),
            }],
            ..Focus::default()
        };
        let n = repeat_nudge(3, &call(json!({"path": "tests/t.py"})), &focus);
        assert!(
            n.contains("- shop/prices.py:4 parse_amount (traceback line 7)"),
            "{n}"
        );
        assert!(
            n.contains(r#""path": "shop/prices.py", "start_line": 4, "end_line": 7"#),
            "{n}"
        );
        let again = repeat_nudge(
            4,
            &call(json!({"path": "shop/prices.py", "start_line": 4, "end_line": 7})),
            &focus,
        );
        assert!(!again.contains("Read it:"), "{again}");
        assert!(again.contains("fix it with str_replace"), "{again}");
    }
}
