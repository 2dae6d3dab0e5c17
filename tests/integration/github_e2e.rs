//! `patchloop action` end to end, the real binary with the real pipeline: an event file, the
//! mock GitHub (every request body checked against the OpenAPI subset), the checkout as
//! GITHUB_WORKSPACE, the real Docker sandbox (prepare → episode), a scripted model, and the
//! real verifier in a fresh container. Needs Docker and the base image scripts/test builds
//! (`$PATCHLOOP_TEST_BASE`); fails, never skips, without them.

use crate::github_common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use github_common::demo::*;
use github_common::*;

const TOKEN: &str = "ghs_e2etoken0123456789abcdefghijklmnopq";

struct Run {
    code: i32,
    /// stdout then stderr.
    output: String,
    outputs: std::collections::BTreeMap<String, String>,
    summary: String,
}

/// Run the binary the way the runner runs the action's entrypoint: a clean environment with
/// the GITHUB_* variables and INPUT_* inputs only.
fn run_action(mock: &MockGitHub, event_name: &str, event: &[u8], ws: &Path, model: &Path) -> Run {
    let files = tempfile::tempdir().unwrap();
    let f = |n: &str| files.path().join(n);
    std::fs::write(f("event.json"), event).unwrap();
    std::fs::create_dir_all(f("runner_temp")).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_patchloop"));
    cmd.arg("action").env_clear();
    for k in ["PATH", "HOME", "DOCKER_HOST"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    let out = cmd
        .current_dir(ws)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", event_name)
        .env("GITHUB_EVENT_PATH", f("event.json"))
        .env("GITHUB_WORKSPACE", ws)
        .env("GITHUB_API_URL", mock.url())
        .env("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}"))
        .env("GITHUB_OUTPUT", f("output"))
        .env("GITHUB_STEP_SUMMARY", f("summary.md"))
        .env("RUNNER_TEMP", f("runner_temp"))
        .env("INPUT_GITHUB-TOKEN", TOKEN)
        .env("INPUT_MODEL", format!("scripted:{}", model.display()))
        // One verification run before and one after keeps the test fast; the verdict logic
        // over N runs has its own tests.
        .env("INPUT_RERUNS", "1")
        .output()
        .expect("running patchloop");
    let read = |n: &str| std::fs::read_to_string(f(n)).unwrap_or_default();
    Run {
        code: out.status.code().unwrap_or(-1),
        output: String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr),
        outputs: parse_outputs(&read("output")),
        summary: read("summary.md"),
    }
}

fn git_status(dir: &Path) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["status", "--porcelain", "--untracked-files=all"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn a_failed_run_becomes_one_verified_suggestion_review() {
    let t0 = Instant::now();
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("e2e-verified");
    let sha = checkout(&ws, "verified");
    let mock = MockGitHub::start().await;
    serve_demo_pr(&mock, &sha);

    let run = run_action(
        &mock,
        "workflow_run",
        &workflow_run_event(&sha),
        &ws,
        &fixing_script(),
    );
    let _images = RemoveImages(sandbox_tags(&run.output));
    eprintln!("verified run: {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(run.code, 0, "{}", run.output);
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    assert!(!run.output.contains(TOKEN), "the token is never printed");

    // Exactly two writes: one review, one status comment. No reactions on a workflow run.
    let writes: Vec<String> = mock
        .writes()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(
        writes,
        vec![
            format!("POST /repos/{OWNER}/{REPO}/pulls/2/reviews"),
            format!("POST /repos/{OWNER}/{REPO}/issues/2/comments"),
        ]
    );
    let marker_key = format!("<!-- patchloop:v1 repo={OWNER}/{REPO} sha={sha} pr=2 patch=");
    mock.with(|s| {
        assert_eq!(s.reviews.len(), 1);
        let review = &s.reviews[0];
        assert_eq!(review["commit_id"], sha.as_str(), "pinned to the PR head");
        assert_eq!(review["event"], "COMMENT");
        assert!(
            review["body"].as_str().unwrap().contains(&marker_key),
            "{review}"
        );
        // One single-line suggestion replacing the buggy line 7 (inside the PR's hunk).
        let comments = review["comments"].as_array().unwrap();
        assert_eq!(comments.len(), 1, "{review}");
        let c = &comments[0];
        assert_eq!(c["path"], "stats/median.py");
        assert_eq!(c["line"], 7);
        assert_eq!(c["side"], "RIGHT");
        assert!(c.get("start_line").is_none(), "{c}");
        let body = c["body"].as_str().unwrap();
        assert!(
            body.starts_with(&format!("```suggestion\n{}\n```\n", FIXED_LINES.join("\n"))),
            "{body}"
        );
        assert!(body.contains(&marker_key), "{body}");

        // The status comment: verified, the receipt, the model that produced the fix, the
        // marker; nothing left over as a diff (the whole patch was suggested).
        assert_eq!(s.comments.len(), 1);
        let status = &s.comments[0].2;
        assert!(
            status.starts_with("### patchloop: verified fix"),
            "{status}"
        );
        assert!(status.contains("1 suggestion(s)"), "{status}");
        assert!(
            status.contains("patchloop verification: `verified`"),
            "{status}"
        );
        assert!(status.contains(FAILING_TEST), "{status}");
        assert!(
            status.contains("Model `scripted:") && status.contains("scripted test double"),
            "a scripted model is named as one: {status}"
        );
        assert!(!status.contains("```diff"), "{status}");
        assert!(status.trim_end().ends_with("-->") && status.contains(&marker_key));
        assert!(s.reactions.is_empty());
        // The failing job's log was read (the passing one's was not).
        let paths: Vec<&str> = s.requests.iter().map(|r| r.path.as_str()).collect();
        assert!(paths.contains(&"/blob/logs/12") && !paths.contains(&"/blob/logs/11"));
    });

    // Outputs: workspace-relative paths to files that exist, and the comment's URL.
    let o = &run.outputs;
    assert_eq!(o["verdict"], "verified", "{o:?}");
    assert_eq!(o["patch-path"], format!(".patchloop/{sha}/patch.diff"));
    assert_eq!(o["receipt-path"], format!(".patchloop/{sha}/receipt.json"));
    assert!(o["comment-url"].contains("/pull/2#issuecomment-"), "{o:?}");
    let patch = std::fs::read_to_string(ws.join(&o["patch-path"])).unwrap();
    assert!(patch.contains(&format!("+{}", FIXED_LINES[2])), "{patch}");
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(ws.join(&o["receipt-path"])).unwrap())
            .unwrap();
    assert_eq!(receipt["verdict"], "verified", "{receipt:#}");
    // The job summary: verdict, model, the failing test from the logs, the diff, the receipt.
    let sm = &run.summary;
    assert!(sm.contains("| `verified` | suggest | `scripted:"), "{sm}");
    assert!(sm.contains(&format!("Failing tests from the logs: `{FAILING_TEST}`")));
    assert!(sm.contains("<summary>Diff</summary>") && sm.contains("<summary>Receipt</summary>"));
    assert!(sm.contains("posted a review with 1 suggestion(s)"), "{sm}");

    // The token stayed in the action: not in the trajectory, the patch or the receipts.
    for e in std::fs::read_dir(ws.join(format!(".patchloop/{sha}"))).unwrap() {
        let p = e.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap_or_default();
        assert!(!text.contains(TOKEN), "{} holds the token", p.display());
    }
    assert!(
        ws.join(format!(".patchloop/{sha}/trajectory.jsonl"))
            .is_file()
    );

    // The checkout is as the runner left it (outputs are git-ignored), and nothing of the
    // sandbox outlives the run.
    assert_eq!(git_status(&ws), "", "the checkout stays clean");
    assert_eq!(wait_for_no_leftovers(&sha), Vec::<String>::new());

    // A re-run of the same failure finds the marker: a notice, no repair, no new post.
    let t1 = Instant::now();
    let again = run_action(
        &mock,
        "workflow_run",
        &workflow_run_event(&sha),
        &ws,
        &fixing_script(),
    );
    assert_eq!(again.code, 0, "{}", again.output);
    assert!(
        again
            .output
            .contains("::notice title=patchloop::ignored because patchloop already attempted"),
        "{}",
        again.output
    );
    assert!(!again.output.contains("preparing"), "{}", again.output);
    assert_eq!(again.outputs["verdict"], "ignored");
    mock.with(|s| assert_eq!((s.reviews.len(), s.comments.len()), (1, 1)));
    eprintln!(
        "re-run: {:.1} s; whole test {:.1} s",
        t1.elapsed().as_secs_f64(),
        t0.elapsed().as_secs_f64()
    );
}

#[tokio::test]
async fn a_command_whose_model_does_not_fix_posts_only_what_config_asks_for() {
    let t0 = Instant::now();
    let root = tempfile::tempdir().unwrap();
    let ws = root.path().join("e2e-wrong-fix");
    let sha = checkout(&ws, "wrong fix");
    let script = root.path().join("wrong-fix.yaml");
    std::fs::write(&script, WRONG_FIX_SCRIPT).unwrap();
    let mock = MockGitHub::start().await;
    serve_demo_pr(&mock, &sha);

    let run = run_action(&mock, "issue_comment", &fix_command_event(), &ws, &script);
    let _images = RemoveImages(sandbox_tags(&run.output));
    eprintln!("unverified run: {:.1} s", t0.elapsed().as_secs_f64());
    assert_eq!(run.code, 1, "no verified fix is exit 1: {}", run.output);
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());

    // The writer's command was authorised through the API, got 👀 at the start and 😕 at
    // the end; nothing else was written (no review, no comment: `report_unverified` is off).
    let comment_id = 492700400u64;
    let writes: Vec<String> = mock
        .writes()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let react = format!("POST /repos/{OWNER}/{REPO}/issues/comments/{comment_id}/reactions");
    assert_eq!(writes, vec![react.clone(), react]);
    mock.with(|s| {
        assert_eq!(
            s.reactions,
            vec![(comment_id, "eyes".into()), (comment_id, "confused".into())]
        );
        assert!(s.reviews.is_empty() && s.comments.is_empty());
        assert!(
            s.requests
                .iter()
                .any(|r| r.path.ends_with("/collaborators/Codertocat/permission")),
            "the permission is asked, not taken from author_association"
        );
    });

    let o = &run.outputs;
    assert_eq!(o["verdict"], "not_verified", "{o:?}");
    assert_eq!(o["receipt-path"], "", "no verification, no receipt");
    assert_eq!(o["comment-url"], "");
    let patch = std::fs::read_to_string(ws.join(&o["patch-path"])).unwrap();
    assert!(patch.contains("(len(ordered) - 1) // 2"), "{patch}");
    assert!(
        run.summary
            .contains("nothing posted: verdict `not_verified`"),
        "{}",
        run.summary
    );
    assert!(run.summary.contains("`scripted:"), "{}", run.summary);
    assert_eq!(git_status(&ws), "");
    assert_eq!(wait_for_no_leftovers(&sha), Vec::<String>::new());

    // The organisation's config asks for a report of unverified runs: the command re-runs and
    // posts one short "no verified fix" comment with the marker, still no suggestion.
    mock.with(|s| {
        s.org_config = Some("report_unverified: true\n".into());
        s.reactions.clear();
    });
    let again = run_action(&mock, "issue_comment", &fix_command_event(), &ws, &script);
    let _more = RemoveImages(sandbox_tags(&again.output));
    assert_eq!(again.code, 1, "{}", again.output);
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    mock.with(|s| {
        assert!(
            s.reviews.is_empty(),
            "no suggestion for an unverified patch"
        );
        assert_eq!(s.comments.len(), 1);
        let c = &s.comments[0].2;
        assert!(
            c.starts_with("### patchloop: no verified fix (`not_verified`)"),
            "{c}"
        );
        assert!(c.contains("No verification receipt"), "{c}");
        assert!(c.contains("Model `scripted:"), "{c}");
        assert!(
            !c.contains("```diff") && !c.contains("```suggestion"),
            "{c}"
        );
        assert!(c.contains(&format!(
            "<!-- patchloop:v1 repo={OWNER}/{REPO} sha={sha} pr=2 patch="
        )));
        assert_eq!(
            s.reactions,
            vec![(comment_id, "eyes".into()), (comment_id, "confused".into())]
        );
    });
    assert!(again.outputs["comment-url"].contains("issuecomment-"));
    assert_eq!(wait_for_no_leftovers(&sha), Vec::<String>::new());
    eprintln!("whole test: {:.1} s", t0.elapsed().as_secs_f64());
}
