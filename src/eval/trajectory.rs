//! Reading agent trajectories (JSONL: a `header` line, one `step` line per step, other event
//! lines, a `final` line) for replay and the viewer. Tolerant: a crashed run's partial file and
//! unknown fields still read; unreadable lines are counted, not fatal.

use std::fmt::Write;

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Call {
    pub name: String,
    pub arguments: Value,
    pub invalid_arguments: Option<String>,
    pub observation: String,
    pub duration_ms: u64,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Step {
    pub step: usize,
    pub assistant_content: String,
    pub finish: String,
    pub calls: Vec<Call>,
    pub model_ms: u64,
    pub tools_ms: u64,
    pub total_tokens: u64,
    pub cost_usd: f64,
    pub notes: Vec<String>,
}

#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Final {
    pub stop_reason: String,
    pub detail: String,
    pub steps: usize,
    pub total_tokens: u64,
    pub cost_usd: f64,
    pub wall_ms: u64,
    pub patch: String,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectory {
    pub model: String,
    pub task: String,
    pub steps: Vec<Step>,
    /// Events other than steps (kind, payload), in order.
    pub events: Vec<(String, Value)>,
    pub fin: Option<Final>,
    /// 1-based numbers of lines that were not JSON objects.
    pub bad_lines: Vec<usize>,
}

pub fn parse(text: &str) -> Trajectory {
    let mut t = Trajectory::default();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            t.bad_lines.push(i + 1);
            continue;
        };
        let kind = v
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        match kind.as_str() {
            "header" => {
                t.model = str_field(&v, "model");
                t.task = str_field(&v, "task");
            }
            "step" => match serde_json::from_value::<Step>(v) {
                Ok(s) => t.steps.push(s),
                Err(_) => t.bad_lines.push(i + 1),
            },
            "final" => match serde_json::from_value::<Final>(v) {
                Ok(f) => t.fin = Some(f),
                Err(_) => t.bad_lines.push(i + 1),
            },
            _ => t.events.push((kind, v)),
        }
    }
    t
}

fn str_field(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

/// Tool arguments as one readable line: `path="x.py", old="..."`, long values clipped.
pub fn args_line(v: &Value, clip: usize) -> String {
    match v {
        Value::Object(map) => map
            .iter()
            .map(|(k, v)| {
                let s = match v {
                    Value::String(s) => format!("{s:?}"),
                    other => other.to_string(),
                };
                format!("{k}={}", clip_str(&s, clip))
            })
            .collect::<Vec<_>>()
            .join(", "),
        Value::Null => String::new(),
        other => clip_str(&other.to_string(), clip),
    }
}

pub fn clip_str(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let head: String = s.chars().take(max).collect();
    format!("{head}… [{} more chars]", s.chars().count() - max)
}

/// The trajectory as terminal text (for `patchloop replay`).
pub fn render_text(t: &Trajectory, observation_lines: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "trajectory: model {} · task {}",
        or_dash(&t.model),
        or_dash(&clip_str(t.task.lines().next().unwrap_or(""), 100))
    );
    for st in &t.steps {
        let _ = writeln!(
            s,
            "\n── step {} ── model {} ms · tools {} ms · {} tokens",
            st.step, st.model_ms, st.tools_ms, st.total_tokens
        );
        let said = st.assistant_content.trim();
        if !said.is_empty() {
            for l in said.lines() {
                let _ = writeln!(s, "  │ {l}");
            }
        }
        for c in &st.calls {
            let _ = writeln!(s, "  ▶ {}({})", c.name, args_line(&c.arguments, 80));
            if let Some(e) = &c.invalid_arguments {
                let _ = writeln!(s, "    ! invalid arguments: {e}");
            }
            let lines: Vec<&str> = c.observation.lines().collect();
            for l in lines.iter().take(observation_lines) {
                let _ = writeln!(s, "    {l}");
            }
            if lines.len() > observation_lines {
                let _ = writeln!(s, "    … {} more lines", lines.len() - observation_lines);
            }
        }
        for n in &st.notes {
            let _ = writeln!(s, "  note: {n}");
        }
    }
    for (kind, _) in &t.events {
        let _ = writeln!(s, "\n[event: {kind}]");
    }
    match &t.fin {
        Some(f) => {
            let _ = writeln!(
                s,
                "\n══ stopped: {} {}── {} steps · {} tokens · ${:.4} · {:.1} s",
                f.stop_reason,
                if f.detail.is_empty() {
                    String::new()
                } else {
                    format!("({}) ", f.detail)
                },
                f.steps,
                f.total_tokens,
                f.cost_usd,
                f.wall_ms as f64 / 1000.0
            );
            if f.patch.trim().is_empty() {
                let _ = writeln!(s, "(no patch)");
            } else {
                let _ = writeln!(s, "{}", f.patch.trim_end());
            }
        }
        None => {
            let _ = writeln!(s, "\n══ no final line: the run was interrupted");
        }
    }
    if !t.bad_lines.is_empty() {
        let _ = writeln!(s, "(unreadable lines: {:?})", t.bad_lines);
    }
    s
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    pub const SAMPLE: &str = concat!(
        r#"{"kind":"header","format_version":1,"started_unix":1,"model":"scripted","sandbox":"c1","config":{},"container_policy":{},"task":"tests/test_core.py::test_clamp fails"}"#,
        "\n",
        r#"{"kind":"step","step":1,"assistant_content":"Let me look.","raw":null,"finish":"tool_calls","calls":[{"name":"view_file","arguments":{"path":"minilib/core.py"},"id":"c1","from_text":false,"invalid_arguments":null,"observation":"1 def clamp(v):\n2     if v > 3:\n3         return 3","duration_ms":12}],"model_ms":100,"tools_ms":12,"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"cost_usd":0.0,"bytes_sent":100,"notes":[]}"#,
        "\n",
        "not json\n",
        r#"{"kind":"step","step":2,"assistant_content":"","finish":"tool_calls","calls":[{"name":"str_replace","arguments":{"path":"minilib/core.py","old":"v > 3","new":"v >= 3"},"observation":"<script>alert(1)</script> replaced 1 occurrence","duration_ms":3}],"model_ms":90,"tools_ms":3,"total_tokens":20,"notes":["you repeated a call"]}"#,
        "\n",
        r#"{"kind":"final","stop_reason":"submitted","detail":"","steps":2,"total_tokens":35,"cost_usd":0.0,"wall_ms":1500,"patch":"--- a/minilib/core.py\n+++ b/minilib/core.py\n@@ -2 +2 @@\n-    if v > 3:\n+    if v >= 3:\n"}"#,
        "\n"
    );

    #[test]
    fn parses_steps_final_and_bad_lines() {
        let t = parse(SAMPLE);
        assert_eq!(t.model, "scripted");
        assert_eq!(t.steps.len(), 2);
        assert_eq!(t.steps[0].calls[0].name, "view_file");
        assert_eq!(t.bad_lines, vec![3]);
        assert_eq!(t.fin.as_ref().unwrap().stop_reason, "submitted");
    }

    #[test]
    fn renders_readably() {
        let text = render_text(&parse(SAMPLE), 2);
        assert!(
            text.contains("── step 1 ── model 100 ms · tools 12 ms · 15 tokens"),
            "{text}"
        );
        assert!(text.contains("  │ Let me look."), "{text}");
        assert!(
            text.contains("  ▶ view_file(path=\"minilib/core.py\")"),
            "{text}"
        );
        assert!(text.contains("    … 1 more lines"), "{text}");
        assert!(text.contains("  note: you repeated a call"), "{text}");
        assert!(
            text.contains("══ stopped: submitted ── 2 steps · 35 tokens"),
            "{text}"
        );
        assert!(text.contains("+    if v >= 3:"), "{text}");
        assert!(text.contains("(unreadable lines: [3])"), "{text}");
        let cut = render_text(
            &parse(
                SAMPLE
                    .lines()
                    .take(2)
                    .collect::<Vec<_>>()
                    .join("\n")
                    .as_str(),
            ),
            5,
        );
        assert!(
            cut.contains("no final line: the run was interrupted"),
            "{cut}"
        );
    }
}
