//! Trajectory files: JSONL, one header line, one line per step (flushed as written), a final
//! line with the stop reason and the patch per loop episode, and `node` lines for the search
//! tree (attempts and candidates, [`NodeRecord`]). A crashed run still leaves every finished
//! step.

use std::fs::File;
use std::io::Write;
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Bumped when a line's shape changes incompatibly.
pub const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Serialize)]
pub struct Header {
    pub format_version: u32,
    pub started_unix: u64,
    /// The model's one-line description (a scripted model says so).
    pub model: String,
    pub sandbox: String,
    pub config: Value,
    pub container_policy: Value,
    pub task: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CallRecord {
    pub name: String,
    pub arguments: Value,
    pub id: Option<String>,
    pub from_text: bool,
    pub invalid_arguments: Option<String>,
    pub observation: String,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepRecord {
    pub step: usize,
    pub assistant_content: String,
    /// The provider's raw message, as received.
    pub raw: Option<Value>,
    pub finish: String,
    pub calls: Vec<CallRecord>,
    pub model_ms: u64,
    pub tools_ms: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub total_tokens: u64,
    pub cost_usd: f64,
    pub bytes_sent: usize,
    /// Loop nudges, format-error notices.
    pub notes: Vec<String>,
}

/// One node of the repair's search tree, written as a `kind: "node"` line: an attempt (one
/// strategy on one model tier), a candidate under it, or the loop's episode under it. A node
/// may be written again as it progresses (a candidate's verdict arrives after its test run):
/// the last line with an id wins.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NodeRecord {
    /// `t0.candidates`, `t0.candidates.c2`, `t1.loop`.
    pub id: String,
    pub parent: Option<String>,
    /// `attempt`, `candidate` or `episode`.
    pub node: String,
    pub tier: usize,
    pub model: String,
    /// `candidates` or `loop`.
    pub strategy: String,
    /// Candidates: `unparsed`, `not_applied`, `duplicate`, `failing`, `passing`, then the
    /// verifier's verdict; attempts: their result (see `RepairAttempt::result`).
    pub status: String,
    /// Why, in a line (the parse error, the failing tests, the verdict's reason).
    pub detail: String,
    /// The candidate's diff (empty for attempts and unparsed candidates).
    pub diff: String,
    pub tokens: u64,
    pub model_ms: u64,
    /// Candidates: restoring the edited files after the check (the checkpoint's rollback).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rollback_ms: u64,
    /// Candidates: the model's reply as received (what was parsed).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub reply: String,
    /// Fills: the server's prompt evaluation (cache reuse included) and generation time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings: Option<crate::agent::model::FillTimings>,
    /// Candidates: where it came from (a rule, a fill and how it was drawn, a chat reply).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<crate::agent::origin::Origin>,
}

impl NodeRecord {
    /// The node of an attempt (`t0.candidates`), `running` until its result is known.
    pub fn attempt(tier: usize, model: &str, strategy: crate::config::repair::Strategy) -> Self {
        NodeRecord {
            id: format!("t{tier}.{}", strategy.as_str()),
            parent: None,
            node: "attempt".into(),
            tier,
            model: model.to_string(),
            strategy: strategy.as_str().into(),
            status: "running".into(),
            detail: String::new(),
            diff: String::new(),
            tokens: 0,
            model_ms: 0,
            rollback_ms: 0,
            reply: String::new(),
            timings: None,
            origin: None,
        }
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize)]
pub struct FinalRecord {
    pub stop_reason: String,
    pub detail: String,
    pub steps: usize,
    pub total_tokens: u64,
    pub cost_usd: f64,
    pub wall_ms: u64,
    pub patch: String,
}

/// Where trajectory lines go: a file (flushed per line) or memory (tests, bench).
pub struct Trajectory {
    sink: Box<dyn Write + Send>,
    /// First write error, reported once; the episode does not stop for a full disk.
    pub write_error: Option<String>,
}

impl Trajectory {
    pub fn create(path: &Path) -> Result<Self, std::io::Error> {
        let f = File::create(path)?;
        Ok(Trajectory {
            sink: Box::new(f),
            write_error: None,
        })
    }

    pub fn to_writer(w: Box<dyn Write + Send>) -> Self {
        Trajectory {
            sink: w,
            write_error: None,
        }
    }

    pub fn discard() -> Self {
        Self::to_writer(Box::new(std::io::sink()))
    }

    fn line(&mut self, kind: &str, value: &impl Serialize) {
        let mut v = match serde_json::to_value(value) {
            Ok(v) => v,
            Err(e) => serde_json::json!({"error": e.to_string()}),
        };
        if let Value::Object(map) = &mut v {
            map.insert("kind".into(), Value::String(kind.into()));
        }
        let mut text = v.to_string();
        text.push('\n');
        let r = self
            .sink
            .write_all(text.as_bytes())
            .and_then(|_| self.sink.flush());
        if let Err(e) = r
            && self.write_error.is_none()
        {
            tracing::error!(error = %e, "cannot write the trajectory");
            self.write_error = Some(e.to_string());
        }
    }

    pub fn header(&mut self, h: &Header) {
        self.line("header", h);
    }
    pub fn step(&mut self, s: &StepRecord) {
        self.line("step", s);
    }
    pub fn event(&mut self, kind: &str, v: &Value) {
        self.line(kind, v);
    }
    pub fn node(&mut self, n: &NodeRecord) {
        self.line("node", n);
    }
    pub fn finish(&mut self, f: &FinalRecord) {
        self.line("final", f);
    }
}

/// A cloneable in-memory sink, for tests and the bench.
#[derive(Clone, Default)]
pub struct MemorySink(pub std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl MemorySink {
    pub fn lines(&self) -> Vec<Value> {
        let bytes = self.0.lock().map(|b| b.clone()).unwrap_or_default();
        String::from_utf8_lossy(&bytes)
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

impl Write for MemorySink {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut b) = self.0.lock() {
            b.extend_from_slice(buf);
        }
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
