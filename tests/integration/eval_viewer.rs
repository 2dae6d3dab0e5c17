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

fn episode(id: &str, resolved: bool, traj: Option<&str>) -> EpisodeResult {
    EpisodeResult {
        instance_id: id.into(),
        attempt: 0,
        run_id: "run-a".into(),
        model: "scripted".into(),
        resolved,
        verdict: if resolved { "verified" } else { "not_verified" }.into(),
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
    std::fs::write(&f, "hello\n").unwrap();
    let bad = Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .arg("replay")
        .arg(&f)
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("is not a patchloop trajectory"));
}
