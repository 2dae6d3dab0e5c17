//! The report and the static viewer end to end: results on disk → `patchloop report` →
//! viewer.html rendered by headless Chromium, checking what the browser shows.

use std::path::Path;
use std::process::Command;

use patchloop::eval::results::{EpisodeResult, episodes_dir, write_result};

const TRAJ: &str = concat!(
    r#"{"kind":"header","format_version":1,"started_unix":1,"model":"scripted","sandbox":"c1","config":{},"container_policy":{},"task":"tests/test_core.py::test_clamp_edges fails"}"#,
    "\n",
    r#"{"kind":"step","step":1,"assistant_content":"Reading the clamp helper.","finish":"tool_calls","calls":[{"name":"view_file","arguments":{"path":"minilib/core.py"},"observation":"1 def clamp(v):\n2     if v > 3:","duration_ms":12}],"model_ms":100,"tools_ms":12,"total_tokens":15,"notes":[]}"#,
    "\n",
    r#"{"kind":"step","step":2,"assistant_content":"","finish":"tool_calls","calls":[{"name":"bash","arguments":{"cmd":"echo hi"},"observation":"<script>document.title='pwned'</script></pre></details><h1 id=\"injected\">x</h1>","duration_ms":3}],"model_ms":90,"tools_ms":3,"total_tokens":20,"notes":["loop nudge: you repeated a call"]}"#,
    "\n",
    r#"{"kind":"final","stop_reason":"submitted","detail":"","steps":2,"total_tokens":35,"cost_usd":0.0,"wall_ms":1500,"patch":"--- a/minilib/core.py\n+++ b/minilib/core.py\n@@ -2 +2 @@\n-    if v > 3:\n+    if v >= 3:\n"}"#,
    "\n"
);

/// A repair's search tree: the candidates strategy on tier 0 with two candidates (one passing,
/// one failing; c1 written twice), no steps. Its model time is only in the nodes: 1.2 + 1.0 s.
const TREE_TRAJ: &str = concat!(
    r#"{"kind":"header","format_version":1,"started_unix":1,"model":"qwen-0.5b","sandbox":"c1","config":{},"container_policy":{},"task":"fix clamp"}"#,
    "\n",
    r#"{"kind":"node","id":"t0.candidates","parent":null,"node":"attempt","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"running","detail":"","diff":"","tokens":0,"model_ms":0}"#,
    "\n",
    r#"{"kind":"node","id":"t0.candidates.c1","parent":"t0.candidates","node":"candidate","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"testing","detail":"","diff":"","tokens":20,"model_ms":1200}"#,
    "\n",
    r#"{"kind":"node","id":"t0.candidates.c2","parent":"t0.candidates","node":"candidate","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"failing","detail":"tests/test_core.py::test_clamp_edges still fails","diff":"--- a/minilib/core.py\n+++ b/minilib/core.py\n@@ -2 +2 @@\n-    if v > 3:\n+    if v > 4:\n","tokens":15,"model_ms":1000}"#,
    "\n",
    r#"{"kind":"node","id":"t0.candidates.c1","parent":"t0.candidates","node":"candidate","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"passing","detail":"target tests pass","diff":"--- a/minilib/core.py\n+++ b/minilib/core.py\n@@ -2 +2 @@\n-    if v > 3:\n+    if v >= 3:\n","tokens":20,"model_ms":1200}"#,
    "\n",
    r#"{"kind":"node","id":"t0.candidates","parent":null,"node":"attempt","tier":0,"model":"qwen-0.5b","strategy":"candidates","status":"verified","detail":"","diff":"","tokens":35,"model_ms":2200}"#,
    "\n",
    r#"{"kind":"final","stop_reason":"submitted","detail":"","steps":0,"total_tokens":35,"cost_usd":0.0,"wall_ms":1500,"patch":"--- a/minilib/core.py\n+++ b/minilib/core.py\n@@ -2 +2 @@\n-    if v > 3:\n+    if v >= 3:\n"}"#,
    "\n"
);

fn episode(id: &str, resolved: bool, traj: Option<&str>) -> EpisodeResult {
    EpisodeResult {
        instance_id: id.into(),
        attempt: 0,
        run_id: "run-a".into(),
        model: "scripted".into(),
        resolved,
        verdict: if resolved {
            patchloop::verify::verdict::Verdict::Verified
        } else {
            patchloop::verify::verdict::Verdict::StillFailing
        },
        stop_reason: if resolved { "submitted" } else { "step_budget" }.into(),
        steps: 2,
        wall_ms: 1500,
        total_tokens: 35,
        cost_usd: 0.0,
        patch: if resolved {
            "--- a/minilib/core.py\n+++ b/minilib/core.py\n@@ -2 +2 @@\n-    if v > 3:\n+    if v >= 3:\n".into()
        } else {
            String::new()
        },
        trajectory: traj.map(str::to_string),
        error: None,
        finished_unix: 1,
        timings: None,
        model_ms: 0,
        attempts: Vec::new(),
        origin: None,
        hidden_check: None,
        hidden_check_detail: None,
        funnel: None,
    }
}

fn chromium_dom(html: &Path, profile: &Path) -> String {
    let out = Command::new("chromium")
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg("--dump-dom")
        .arg(format!("file://{}", html.display()))
        .output()
        .expect("chromium must be installed (apt-get install -y chromium) for the viewer test");
    assert!(
        out.status.success(),
        "chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn report_writes_markdown_and_a_viewer_chromium_renders() {
    let root = tempfile::tempdir().unwrap();
    let eps = episodes_dir(root.path(), "run-a");
    std::fs::create_dir_all(&eps).unwrap();
    std::fs::write(eps.join("t1__0.traj.jsonl"), TRAJ).unwrap();
    write_result(
        &eps,
        &episode("o__n-flipcmp-1", true, Some("t1__0.traj.jsonl")),
    )
    .unwrap();
    write_result(&eps, &episode("o__n-negate-2", false, None)).unwrap();

    let out = Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .args(["report", "--run-id", "run-a", "--results"])
        .arg(root.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains("Resolved (first attempt): 1/2 = **50.0%**"),
        "{md}"
    );
    assert!(md.contains("| step_budget | 1 |"), "{md}");
    let viewer = root.path().join("run-a/viewer.html");
    assert!(root.path().join("run-a/report.md").exists());

    let profile = tempfile::tempdir().unwrap();
    let dom = chromium_dom(&viewer, profile.path());
    // What the page shows: the summary, both episodes, steps, tool calls, observations, diff.
    assert!(dom.contains("Resolved 1/2 (50.0%"), "{dom}");
    assert!(dom.contains("o__n-flipcmp-1") && dom.contains("o__n-negate-2"));
    assert!(dom.contains("step 1 · 1 call(s) · 15 tokens"));
    assert!(dom.contains("view_file(path=\"minilib/core.py\")"));
    assert!(dom.contains("Reading the clamp helper."));
    assert!(dom.contains("loop nudge: you repeated a call"));
    assert!(
        dom.contains("<span class=\"add\">+    if v &gt;= 3:</span>"),
        "{dom}"
    );
    assert!(dom.contains("(no trajectory recorded)"));
    // The hostile observation is shown as text: no script ran, no element was injected.
    assert!(
        dom.contains("<title>patchloop run run-a</title>"),
        "the title was changed"
    );
    assert!(
        !dom.contains("<h1 id=\"injected\""),
        "markup from an observation became an element"
    );
    assert!(
        dom.contains("&lt;h1 id=\"injected\"&gt;x&lt;/h1&gt;"),
        "{dom}"
    );
    assert_eq!(dom.matches("<section class=\"episode").count(), 2);
}

fn write_run(root: &Path, run: &str, episodes: &[(&str, bool, Option<&str>)]) {
    let eps = episodes_dir(root, run);
    std::fs::create_dir_all(&eps).unwrap();
    for (id, resolved, traj) in episodes {
        let mut e = episode(id, *resolved, None);
        e.run_id = run.into();
        if let Some(text) = traj {
            let name = format!("{id}__0.traj.jsonl");
            std::fs::write(eps.join(&name), text).unwrap();
            e.trajectory = Some(name);
        }
        write_result(&eps, &e).unwrap();
    }
}

fn report(root: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .arg("report")
        .args(args)
        .arg("--results")
        .arg(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn runs_side_by_side_and_the_search_tree_in_the_viewer() {
    let root = tempfile::tempdir().unwrap();
    // run-a: the loop (190 model-ms in its steps); run-b: candidates (2200 in its nodes);
    // run-c: one task only, unresolved. No result records model_ms: the trajectories do.
    write_run(
        root.path(),
        "run-a",
        &[("o__x", true, Some(TRAJ)), ("o__y", false, None)],
    );
    write_run(
        root.path(),
        "run-b",
        &[("o__x", true, Some(TREE_TRAJ)), ("o__y", true, None)],
    );
    write_run(root.path(), "run-c", &[("o__x", false, None)]);

    let md = report(
        root.path(),
        &["--run-id", "run-a", "--vs", "run-b", "--vs", "run-c"],
    );
    assert!(md.contains("## A/B: 3 runs"), "{md}");
    for row in [
        "| `run-a` | scripted | 1/2 (50.0%) | 9.5% – 90.5% | 70 | 0.2 | — | — | — | — |",
        "| `run-b` | scripted | 2/2 (100.0%) | 34.2% – 100.0% | 35 | 1.1 | 2 | 0 | 1 | 1.0000 |",
        "| `run-c` | scripted | 0/1 (0.0%) | 0.0% – 79.3% | — | — | 1 | 1 | 0 | 1.0000 |",
    ] {
        assert!(md.contains(row), "missing {row}\n{md}");
    }
    assert!(
        md.contains("`run-a` vs `run-c`: tasks in both runs: 1."),
        "{md}"
    );

    let md = report(root.path(), &["--run-id", "run-b"]);
    assert!(md.contains("| 35 | 1.1 s |"), "{md}");
    let profile = tempfile::tempdir().unwrap();
    let dom = chromium_dom(&root.path().join("run-b/viewer.html"), profile.path());
    // One tree (the episode without a trajectory has none): the attempt, and inside its list
    // item a nested list with both candidates, each with its badge and its diff folded.
    assert_eq!(dom.matches("search tree").count(), 1, "{dom}");
    let at = |needle: &str| {
        dom.find(needle)
            .unwrap_or_else(|| panic!("{needle} not in the page: {dom}"))
    };
    let attempt = at("data-node=\"t0.candidates\"");
    let c1 = at("data-node=\"t0.candidates.c1\"");
    let c2 = at("data-node=\"t0.candidates.c2\"");
    assert!(attempt < c1 && c1 < c2, "{dom}");
    let between = &dom[attempt..c1];
    assert!(
        between.contains("<ul>") && !between.contains("</li>"),
        "the candidates are not nested in the attempt: {between}"
    );
    assert!(
        dom.contains("<span class=\"status st-ok\">verified</span> <b>attempt</b>"),
        "{dom}"
    );
    let c1_item = &dom[c1..c2];
    assert!(
        c1_item.contains("<span class=\"status st-ok\">passing</span>"),
        "{c1_item}"
    );
    assert!(
        c1_item.contains("tier 0 · qwen-0.5b · candidates · 20 tokens · 1.2 model-s"),
        "{c1_item}"
    );
    assert!(
        c1_item.contains("<summary>diff (5 lines)</summary>")
            && c1_item.contains("<span class=\"add\">+    if v &gt;= 3:</span>"),
        "{c1_item}"
    );
    let c2_item = &dom[c2..];
    assert!(
        c2_item.contains("<span class=\"status st-bad\">failing</span>")
            && c2_item.contains("tests/test_core.py::test_clamp_edges still fails")
            && c2_item.contains("<span class=\"add\">+    if v &gt; 4:</span>"),
        "{c2_item}"
    );
    // the episode's model time came from the nodes
    assert!(dom.contains("35 tokens · 2.2 model-s"), "{dom}");
}

#[test]
fn report_without_a_run_says_how_to_make_one() {
    let root = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .args(["report", "--run-id", "missing", "--results"])
        .arg(root.path())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("patchloop eval --run-id missing"), "{err}");
}

#[test]
fn replay_prints_a_trajectory() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("t.traj.jsonl");
    std::fs::write(&f, TRAJ).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .arg("replay")
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("── step 2 ──"), "{text}");
    assert!(text.contains("▶ bash(cmd=\"echo hi\")"), "{text}");
    assert!(text.contains("══ stopped: submitted"), "{text}");
    assert!(!text.contains("search tree"), "{text}");
    std::fs::write(&f, TREE_TRAJ).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .arg("replay")
        .arg(&f)
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("── search tree (3 nodes) ──"), "{text}");
    assert!(
        text.contains("  [verified] attempt t0.candidates · tier 0 · qwen-0.5b · candidates"),
        "{text}"
    );
    assert!(
        text.contains("    [passing] candidate t0.candidates.c1")
            && text.contains("    [failing] candidate t0.candidates.c2"),
        "{text}"
    );
    std::fs::write(&f, "hello\n").unwrap();
    let bad = Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .arg("replay")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a patchloop trajectory"));
}
