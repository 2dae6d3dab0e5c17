//! The demo repository (`examples/demo-repo`) as the checkout of pull request #2, for the
//! end-to-end tests that run the real pipeline: the real Docker sandbox, a scripted model and
//! the real verifier behind `patchloop action`, against the mock GitHub.
//!
//! The PR "simplified" `median()` and so broke the even-length case. The mock serves the PR
//! with that patch, so the scripted fix of line 7 anchors inside the PR's hunk as a suggestion.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

use super::{MockGitHub, OWNER, REPO, fixture};

/// The test the planted bug breaks (named in the failed job's log).
pub const FAILING_TEST: &str = "tests/test_median.py::test_even_length_averages_the_middle_pair";

/// PR #2's patch of `stats/median.py` as `pulls/list-files` reports it. Its right side is the
/// checkout's file: lines 4-7 are commentable, the buggy `return` is line 7.
pub const MEDIAN_PR_PATCH: &str = "@@ -4,6 +4,4 @@ def median(values):
         raise ValueError(\"median() of an empty sequence\")
     ordered = sorted(values)
     mid = len(ordered) // 2
-    if len(ordered) % 2 == 1:
-        return ordered[mid]
-    return (ordered[mid - 1] + ordered[mid]) / 2
+    return ordered[mid]";

/// The lines the scripted fix puts in place of line 7.
pub const FIXED_LINES: [&str; 3] = [
    "    if len(ordered) % 2 == 1:",
    "        return ordered[mid]",
    "    return (ordered[mid - 1] + ordered[mid]) / 2",
];

/// The run id of the failed workflow run in the derived fixture.
pub const RUN_ID: u64 = 289782451;

/// A scripted model that fixes the bug (the one `patchloop demo` uses).
pub fn fixing_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/scripted/demo-fix.yaml")
}

/// A scripted model whose "fix" is wrong: the even-length test still fails.
pub const WRONG_FIX_SCRIPT: &str = r#"# A wrong fix: always the lower middle value.
turns:
  - content: "Run the tests."
    tool_calls:
      - name: run_tests
        arguments: {}
  - content: "Take the lower middle value."
    tool_calls:
      - name: str_replace
        arguments:
          path: stats/median.py
          old_str: "    return ordered[mid]\n"
          new_str: "    return ordered[(len(ordered) - 1) // 2]\n"
  - content: "Done."
    tool_calls:
      - name: submit
        arguments: {}
"#;

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "user.name=Codertocat",
            "-c",
            "user.email=c@example.com",
        ])
        .args([
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=changes",
        ])
        .args(args)
        .env("GIT_AUTHOR_DATE", "2026-01-02T03:04:05Z")
        .env("GIT_COMMITTER_DATE", "2026-01-02T03:04:05Z")
        .output()
        .expect("git is needed for the end-to-end tests");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let name = e.file_name();
        if name == "__pycache__" || name == ".pytest_cache" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &to.join(&name));
        } else {
            std::fs::copy(e.path(), to.join(&name)).unwrap();
        }
    }
}

/// A checkout of the demo repository at `dir` the way `actions/checkout` leaves it: a git
/// repository whose HEAD is the PR head. `salt` makes the SHA unique per test, so the
/// containers of concurrent tests (labelled `action-<sha12>`) are told apart. Returns the SHA.
pub fn checkout(dir: &Path, salt: &str) -> String {
    copy_tree(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo-repo"),
        dir,
    );
    git(dir, &["init", "-q"]);
    git(dir, &["add", "-A"]);
    git(
        dir,
        &["commit", "-q", "-m", &format!("Simplify median() ({salt})")],
    );
    git(dir, &["rev-parse", "HEAD"])
}

/// Serve PR #2 at `sha` with the median patch, its failed run (a lint job that passed, a
/// test job whose log names the failing test and the command), a writer, and the file at HEAD.
pub fn serve_demo_pr(mock: &MockGitHub, sha: &str) {
    mock.add_pr(
        2,
        sha,
        vec![("stats/median.py", "modified", MEDIAN_PR_PATCH)],
    );
    let median = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/demo-repo/stats/median.py"),
    )
    .unwrap();
    mock.with(|s| {
        s.jobs.insert(
            RUN_ID,
            json!({"total_count": 2, "jobs": [
                {"id": 11, "name": "lint", "conclusion": "success"},
                {"id": 12, "name": "test", "conclusion": "failure"}]}),
        );
        s.logs.insert(
            12,
            format!(
                "2026-01-02T03:04:05.0000000Z ##[group]Run python -m pytest -q\n\
                 2026-01-02T03:04:07.0000000Z FAILED {FAILING_TEST} - assert 3 == 2.5\n\
                 2026-01-02T03:04:07.0000000Z 1 failed, 3 passed in 0.02s\n"
            ),
        );
        s.permissions.insert("Codertocat".into(), "write".into());
        s.contents.insert("stats/median.py".into(), median);
    });
}

/// The derived `workflow_run` failure, pointed at the mock's repository and `sha`.
pub fn workflow_run_event(sha: &str) -> Vec<u8> {
    let mut v: Value = serde_json::from_slice(&fixture(
        "webhooks-derived/workflow_run/completed.failure.pull_request.json",
    ))
    .unwrap();
    v["repository"]["full_name"] = format!("{OWNER}/{REPO}").into();
    // A same-repository PR (fork PRs have their own tests).
    v["workflow_run"]["head_repository"]["full_name"] = format!("{OWNER}/{REPO}").into();
    v["workflow_run"]["head_sha"] = sha.into();
    v["workflow_run"]["pull_requests"][0]["head"]["sha"] = sha.into();
    serde_json::to_vec(&v).unwrap()
}

/// The derived `/patchloop fix` comment on PR #2 by Codertocat.
pub fn fix_command_event() -> Vec<u8> {
    fixture("webhooks-derived/issue_comment/created.on-pull-request.patchloop-fix.json")
}

/// Containers and volumes of the action's runs (`action-<sha12>`, `action-<sha12>-verify`)
/// that still exist.
pub fn leftovers(sha: &str) -> Vec<String> {
    let prefix = format!("action-{}", &sha[..12]);
    let mut left = Vec::new();
    let out = Command::new("docker")
        .args([
            "ps",
            "-a",
            "--filter",
            "label=patchloop.run",
            "--format",
            "{{.Names}} {{.Label \"patchloop.run\"}}",
        ])
        .output()
        .expect("docker CLI");
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        if l.split_whitespace()
            .nth(1)
            .is_some_and(|r| r.starts_with(&prefix))
        {
            left.push(format!("container {l}"));
        }
    }
    let out = Command::new("docker")
        .args(["volume", "ls", "-q", "--filter"])
        .arg(format!("name=patchloop-{prefix}"))
        .output()
        .expect("docker CLI");
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        left.push(format!("volume {l}"));
    }
    left
}

/// Wait (a few seconds at most: AutoRemove is asynchronous) until the action's containers
/// and volumes are gone; returns what is left.
pub fn wait_for_no_leftovers(sha: &str) -> Vec<String> {
    for _ in 0..20 {
        let left = leftovers(sha);
        if left.is_empty() {
            return left;
        }
        std::thread::sleep(std::time::Duration::from_millis(250));
    }
    leftovers(sha)
}

/// Sandbox image tags a run's progress output names (`patchloop-sandbox:…`), to remove them.
pub fn sandbox_tags(output: &str) -> Vec<String> {
    let mut tags: Vec<String> = output
        // Tags also sit in parentheses and lists (`fix`'s environment note).
        .split(|c: char| c.is_whitespace() || matches!(c, '(' | ')' | ',' | ';'))
        .filter(|w| w.starts_with("patchloop-sandbox:"))
        .map(|w| {
            w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric())
                .to_string()
        })
        .collect();
    tags.sort();
    tags.dedup();
    tags
}

/// Removes the run's sandbox images when the test ends, whatever its outcome.
pub struct RemoveImages(pub Vec<String>);

impl Drop for RemoveImages {
    fn drop(&mut self) {
        for t in &self.0 {
            let _ = Command::new("docker").args(["rmi", "-f", t]).output();
        }
    }
}

/// Parse `GITHUB_OUTPUT` heredoc lines (`k<<DELIM`, value, `DELIM`) into pairs.
pub fn parse_outputs(text: &str) -> std::collections::BTreeMap<String, String> {
    let mut out = std::collections::BTreeMap::new();
    let mut lines = text.lines();
    while let Some(l) = lines.next() {
        if let Some((k, delim)) = l.split_once("<<") {
            let mut v = Vec::new();
            for x in lines.by_ref() {
                if x == delim {
                    break;
                }
                v.push(x);
            }
            out.insert(k.to_string(), v.join("\n"));
        }
    }
    out
}
