//! Reading agent trajectories (JSONL: a `header` line, one `step` line per step, `node` lines of
//! the repair's search tree, other event lines, a `final` line) for replay, the report and the
//! viewer. Tolerant: a crashed run's partial file and unknown fields still read; unreadable lines
//! are counted, not fatal.

use std::collections::{HashMap, HashSet};
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

/// One node of the search tree (`crate::agent::trajectory::NodeRecord` as read back, every
/// field optional so older or partial lines still read).
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(default)]
pub struct Node {
    pub id: String,
    pub parent: Option<String>,
    /// `attempt`, `candidate` or `episode`.
    pub node: String,
    pub tier: usize,
    pub model: String,
    pub strategy: String,
    pub status: String,
    pub detail: String,
    pub diff: String,
    pub tokens: u64,
    pub model_ms: u64,
    /// Candidates: the model's reply as recorded.
    pub reply: String,
    /// Candidates: where it came from (absent in older trajectories).
    pub origin: Option<crate::agent::origin::Origin>,
    /// Fills: the server's prompt and generation time.
    pub timings: Option<crate::agent::model::FillTimings>,
}

#[derive(Debug, Clone, Default, PartialEq)]
pub struct Trajectory {
    pub model: String,
    pub task: String,
    pub steps: Vec<Step>,
    /// The search tree's nodes, one per id (its last line), in order of first appearance.
    pub nodes: Vec<Node>,
    /// Events other than steps (kind, payload), in order.
    pub events: Vec<(String, Value)>,
    pub fin: Option<Final>,
    /// 1-based numbers of lines that were not JSON objects.
    pub bad_lines: Vec<usize>,
}

pub fn parse(text: &str) -> Trajectory {
    let mut t = Trajectory::default();
    // id -> index in t.nodes: a node written again replaces its earlier line in place.
    let mut node_at: HashMap<String, usize> = HashMap::new();
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
            "node" => match serde_json::from_value::<Node>(v) {
                Ok(n) if !n.id.is_empty() => match node_at.get(&n.id) {
                    Some(&at) => t.nodes[at] = n,
                    None => {
                        node_at.insert(n.id.clone(), t.nodes.len());
                        t.nodes.push(n);
                    }
                },
                _ => t.bad_lines.push(i + 1),
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

/// Time the model server spent answering, as the trajectory records it: every step's
/// `model_ms` plus every candidate node's (candidates are sampled outside the loop's steps).
/// Attempt and episode nodes are sums of what lies under them, so they are not added again.
pub fn model_ms(t: &Trajectory) -> u64 {
    let steps: u64 = t.steps.iter().map(|s| s.model_ms).sum();
    let candidates: u64 = t
        .nodes
        .iter()
        .filter(|n| n.node == "candidate")
        .map(|n| n.model_ms)
        .sum();
    steps + candidates
}

/// The nodes as a forest: each root with its descendants, depth-first in order of first
/// appearance, as (depth, node). A node whose parent is unknown is a root; a node is visited
/// once, so a cycle in bad input cannot loop.
pub fn tree(nodes: &[Node]) -> Vec<(usize, &Node)> {
    let ids: HashSet<&str> = nodes.iter().map(|n| n.id.as_str()).collect();
    let mut children: HashMap<&str, Vec<&Node>> = HashMap::new();
    let mut roots = Vec::new();
    for n in nodes {
        match n.parent.as_deref() {
            Some(p) if ids.contains(p) && p != n.id => children.entry(p).or_default().push(n),
            _ => roots.push(n),
        }
    }
    let mut out = Vec::with_capacity(nodes.len());
    let mut seen: HashSet<&str> = HashSet::new();
    // Roots first; then whatever a parent cycle kept unreachable, so no node is dropped.
    for start in roots.into_iter().chain(nodes.iter()) {
        let mut stack = vec![(0, start)];
        while let Some((depth, n)) = stack.pop() {
            if !seen.insert(n.id.as_str()) {
                continue;
            }
            out.push((depth, n));
            if let Some(kids) = children.get(n.id.as_str()) {
                stack.extend(kids.iter().rev().map(|k| (depth + 1, *k)));
            }
        }
    }
    out
}

/// A node's one-line description: kind, tier/model/strategy, status, spend.
pub fn node_line(n: &Node) -> String {
    let mut s = format!("{} {}", or_dash(&n.node), or_dash(&n.id));
    let _ = write!(s, " · tier {}", n.tier);
    if !n.model.is_empty() {
        let _ = write!(s, " · {}", n.model);
    }
    if !n.strategy.is_empty() {
        let _ = write!(s, " · {}", n.strategy);
    }
    let _ = write!(
        s,
        " · {} tokens · {:.1} model-s",
        n.tokens,
        n.model_ms as f64 / 1000.0
    );
    s
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
    if !t.nodes.is_empty() {
        let _ = writeln!(s, "\n── search tree ({} nodes) ──", t.nodes.len());
        for (depth, n) in tree(&t.nodes) {
            let pad = "  ".repeat(depth + 1);
            let _ = writeln!(s, "{pad}[{}] {}", or_dash(&n.status), node_line(n));
            if !n.detail.trim().is_empty() {
                let _ = writeln!(s, "{pad}    {}", clip_str(n.detail.trim(), 200));
            }
            let diff: Vec<&str> = n.diff.lines().collect();
            for l in diff.iter().take(observation_lines) {
                let _ = writeln!(s, "{pad}    {l}");
            }
            if diff.len() > observation_lines {
                let _ = writeln!(
                    s,
                    "{pad}    … {} more diff lines",
                    diff.len() - observation_lines
                );
            }
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

    /// A search tree: candidates on tier 0 (one passing, one failing; c1 written twice as its
    /// test run finishes), then the loop on tier 1, with one step of its own.
    pub const TREE: &str = concat!(
        r#"{"kind":"header","format_version":1,"model":"qwen-1.5b","task":"fix clamp"}"#,
        "\n",
        r#"{"kind":"node","id":"t0.candidates","parent":null,"node":"attempt","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"running","detail":"","diff":"","tokens":0,"model_ms":0}"#,
        "\n",
        r#"{"kind":"node","id":"t0.candidates.c1","parent":"t0.candidates","node":"candidate","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"testing","detail":"","diff":"","tokens":300,"model_ms":1200}"#,
        "\n",
        r#"{"kind":"node","id":"t0.candidates.c2","parent":"t0.candidates","node":"candidate","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"failing","detail":"tests/test_core.py::test_clamp still fails","diff":"--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a\n+c\n","tokens":280,"model_ms":1100}"#,
        "\n",
        r#"{"kind":"node","id":"t0.candidates.c1","parent":"t0.candidates","node":"candidate","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"passing","detail":"target tests pass","diff":"--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-a\n+<b>\n","tokens":300,"model_ms":1200}"#,
        "\n",
        r#"{"kind":"node","id":"t0.candidates","parent":null,"node":"attempt","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"not_verified","detail":"hidden tests fail","diff":"","tokens":580,"model_ms":2300}"#,
        "\n",
        r#"{"kind":"node","id":"t1.loop","parent":null,"node":"attempt","tier":1,"model":"qwen-1.5b","strategy":"loop","status":"verified","detail":"","diff":"","tokens":900,"model_ms":4000}"#,
        "\n",
        r#"{"kind":"node","id":"t1.loop.e","parent":"t1.loop","node":"episode","tier":1,"model":"qwen-1.5b","strategy":"loop","status":"submitted","tokens":900,"model_ms":4000}"#,
        "\n",
        r#"{"kind":"step","step":1,"assistant_content":"","finish":"tool_calls","calls":[],"model_ms":4000,"tools_ms":5,"total_tokens":900,"notes":[]}"#,
        "\n",
        r#"{"kind":"node","parent":"t1.loop"}"#,
        "\n",
        r#"{"kind":"final","stop_reason":"submitted","detail":"","steps":1,"total_tokens":1480,"cost_usd":0.0,"wall_ms":9000,"patch":""}"#,
        "\n"
    );

    #[test]
    fn nodes_last_line_wins_in_first_order() {
        let t = parse(TREE);
        let ids: Vec<&str> = t.nodes.iter().map(|n| n.id.as_str()).collect();
        assert_eq!(
            ids,
            vec![
                "t0.candidates",
                "t0.candidates.c1",
                "t0.candidates.c2",
                "t1.loop",
                "t1.loop.e"
            ]
        );
        assert_eq!(t.nodes[0].status, "not_verified");
        assert_eq!(t.nodes[1].status, "passing");
        assert!(t.nodes[1].diff.contains("+<b>"));
        // the node line without an id cannot be placed: counted as unreadable
        assert_eq!(t.bad_lines, vec![10]);
        assert!(t.events.is_empty(), "{:?}", t.events);
    }

    #[test]
    fn model_ms_sums_steps_and_candidates_only() {
        // steps 4000 + candidates 1200 + 1100; attempt and episode nodes are sums, not added
        assert_eq!(model_ms(&parse(TREE)), 6300);
        assert_eq!(model_ms(&parse(SAMPLE)), 190);
        assert_eq!(model_ms(&Trajectory::default()), 0);
    }

    #[test]
    fn tree_nests_by_parent_and_survives_bad_parents() {
        let t = parse(TREE);
        let got: Vec<(usize, &str)> = tree(&t.nodes)
            .into_iter()
            .map(|(d, n)| (d, n.id.as_str()))
            .collect();
        assert_eq!(
            got,
            vec![
                (0, "t0.candidates"),
                (1, "t0.candidates.c1"),
                (1, "t0.candidates.c2"),
                (0, "t1.loop"),
                (1, "t1.loop.e")
            ]
        );
        let node = |id: &str, parent: Option<&str>| Node {
            id: id.into(),
            parent: parent.map(str::to_string),
            ..Node::default()
        };
        // a cycle, a self-parent and an unknown parent: every node still shows, once
        let odd = vec![
            node("a", Some("b")),
            node("b", Some("a")),
            node("s", Some("s")),
            node("o", Some("gone")),
        ];
        let got: Vec<(usize, &str)> = tree(&odd)
            .into_iter()
            .map(|(d, n)| (d, n.id.as_str()))
            .collect();
        assert_eq!(got, vec![(0, "s"), (0, "o"), (0, "a"), (1, "b")]);
    }

    #[test]
    fn replay_prints_the_tree() {
        let text = render_text(&parse(TREE), 3);
        assert!(text.contains("── search tree (5 nodes) ──"), "{text}");
        assert!(
            text.contains(
                "  [not_verified] attempt t0.candidates · tier 0 · qwen-0.5b · candidates · 580 tokens · 2.3 model-s"
            ),
            "{text}"
        );
        assert!(
            text.contains("    [passing] candidate t0.candidates.c1 · tier 0"),
            "{text}"
        );
        assert!(
            text.contains("        tests/test_core.py::test_clamp still fails"),
            "{text}"
        );
        assert!(text.contains("        … 2 more diff lines"), "{text}");
        assert!(!text.contains("[event: node]"), "{text}");
    }

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
