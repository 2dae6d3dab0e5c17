//! The action container as GitHub's runner starts it: workspace at /github/workspace, the
//! event at /github/workflow/event.json, HOME at /github/home, GITHUB_* variables, the Docker
//! socket mounted, and the API (here the mock on the host) reached over the network.
//!
//! No registry is reachable here, so the image is built offline: the offline base image the
//! sandbox images use (`$PATCHLOOP_TEST_BASE`) plus the binary built by cargo (the shipped
//! Dockerfile builds the same binary from source). Inside, `patchloop action` builds its
//! sandbox image through the socket from a tar stream (the workspace path inside is not a
//! host path), runs the scripted model, verifies in a fresh container and posts the review.
//!
//! The container uses `--network host`: the mock binds 127.0.0.1 (wiremock's default), and
//! with the host's network namespace the container reaches it at the same URL as the host.
//! The bridge gateway would need the mock bound to a non-loopback address and traffic from
//! the bridge to the host allowed; on GitHub the action joins the job's network instead,
//! which is not what is under test here.
//!
//! Needs Docker; fails (never skips) without it.

use crate::github_common;

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use github_common::demo::*;
use github_common::*;

const TOKEN: &str = "ghs_containertoken0123456789abcdefghijk";

struct Image(String);

impl Drop for Image {
    fn drop(&mut self) {
        let _ = Command::new("docker").args(["rmi", "-f", &self.0]).output();
    }
}

fn base_image() -> String {
    std::env::var("PATCHLOOP_TEST_BASE")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "patchloop-probe:base".into())
}

fn build_image() -> Image {
    let base = base_image();
    let ctx = tempfile::tempdir().unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_patchloop"),
        ctx.path().join("patchloop"),
    )
    .unwrap();
    // Root, no reliance on WORKDIR, as the shipped Dockerfile. Its `safe.directory` git config
    // is left out on purpose: the binary must read a checkout owned by another user by itself.
    std::fs::write(
        ctx.path().join("Dockerfile"),
        format!(
            "FROM {base}\nCOPY patchloop /usr/local/bin/patchloop\nUSER root\n\
             ENTRYPOINT [\"/usr/local/bin/patchloop\"]\nCMD [\"action\"]\n"
        ),
    )
    .unwrap();
    let tag = format!("patchloop-action-test:{}", std::process::id());
    let out = Command::new("docker")
        .args(["build", "-q", "-t", &tag])
        .arg(ctx.path())
        .output()
        .expect("docker CLI (Docker is required for this test)");
    assert!(
        out.status.success(),
        "docker build on {base} (the offline base image; build it with `patchloop images build \
         --offline` and export PATCHLOOP_TEST_BASE): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Image(tag)
}

struct Run {
    code: i32,
    /// stdout then stderr.
    output: String,
    outputs: std::collections::BTreeMap<String, String>,
    summary: String,
}

/// `docker run` as the runner's ContainerActionHandler does it. `root` holds the runner's
/// directories: `workspace` (the checkout), `workflow`, `file_commands`, `home`.
fn run_like_the_runner(
    image: &str,
    root: &Path,
    api: &str,
    event_name: &str,
    event: &[u8],
    model: Option<&str>,
) -> Run {
    for d in ["workspace", "workflow", "file_commands", "home"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::write(root.join("workflow/event.json"), event).unwrap();
    for f in ["output", "summary"] {
        let _ = std::fs::remove_file(root.join("file_commands").join(f));
    }
    let v = |d: &str, to: &str| format!("{}:{to}", root.join(d).display());
    let mut cmd = Command::new("docker");
    cmd.args([
        "run",
        "--rm",
        "--network",
        "host",
        "--workdir",
        "/github/workspace",
    ])
    .args(["-v", "/var/run/docker.sock:/var/run/docker.sock"])
    .args(["-v", &v("home", "/github/home")])
    .args(["-v", &v("workflow", "/github/workflow")])
    .args(["-v", &v("file_commands", "/github/file_commands")])
    .args(["-v", &v("workspace", "/github/workspace")])
    .args(["-e", "HOME=/github/home"])
    .args(["-e", "GITHUB_ACTIONS=true"])
    .args(["-e", &format!("GITHUB_EVENT_NAME={event_name}")])
    .args(["-e", "GITHUB_EVENT_PATH=/github/workflow/event.json"])
    .args(["-e", "GITHUB_WORKSPACE=/github/workspace"])
    .args(["-e", &format!("GITHUB_API_URL={api}")])
    .args(["-e", &format!("GITHUB_REPOSITORY={OWNER}/{REPO}")])
    .args(["-e", "GITHUB_OUTPUT=/github/file_commands/output"])
    .args(["-e", "GITHUB_STEP_SUMMARY=/github/file_commands/summary"])
    // The runner passes RUNNER_TEMP untranslated: a host path that is not mounted here.
    .args(["-e", "RUNNER_TEMP=/home/runner/work/_temp"])
    .args(["-e", &format!("INPUT_GITHUB-TOKEN={TOKEN}")])
    .args(["-e", "INPUT_RERUNS=1"]);
    if let Some(m) = model {
        cmd.args(["-e", &format!("INPUT_MODEL={m}")]);
    }
    let out = cmd.arg(image).arg("action").output().unwrap();
    let read =
        |f: &str| std::fs::read_to_string(root.join("file_commands").join(f)).unwrap_or_default();
    Run {
        code: out.status.code().unwrap_or(-1),
        output: String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr),
        outputs: parse_outputs(&read("output")),
        summary: read("summary"),
    }
}

#[tokio::test]
async fn the_action_container_repairs_and_posts_the_way_the_runner_starts_it() {
    let t0 = Instant::now();
    let image = build_image();
    eprintln!("action image: {:.1} s", t0.elapsed().as_secs_f64());
    let root = tempfile::tempdir().unwrap();
    let root = root.path();
    let sha = checkout(&root.join("workspace"), "container");
    // The runner's checkout belongs to the runner's user, not to root in the action container
    // (git refuses such a repository unless told it is safe).
    let chown = Command::new("chown")
        .args(["-R", "1001:1001"])
        .arg(root.join("workspace"))
        .status()
        .unwrap();
    assert!(chown.success());
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::copy(fixing_script(), root.join("home/demo-fix.yaml")).unwrap();
    let mock = MockGitHub::start().await;
    serve_demo_pr(&mock, &sha);

    // An event the bot does not act on: a notice, exit 0, verdict output.
    let r = run_like_the_runner(
        &image.0,
        root,
        &mock.url(),
        "workflow_run",
        &fixture("webhooks/workflow_run/completed.payload.json"),
        None,
    );
    assert_eq!(r.code, 0, "{}", r.output);
    assert!(
        r.output.contains(
            "::notice title=patchloop::ignored because the workflow run concluded `success`"
        ),
        "{}",
        r.output
    );
    assert_eq!(r.outputs["verdict"], "ignored", "{:?}", r.outputs);

    // A failed run with no model configured: the container reads the event, talks to the
    // API, downloads the logs, and stops before any container with the input to set (exit 2).
    let r = run_like_the_runner(
        &image.0,
        root,
        &mock.url(),
        "workflow_run",
        &workflow_run_event(&sha),
        None,
    );
    assert_eq!(r.code, 2, "{}", r.output);
    assert!(
        r.output.contains("::error title=patchloop::") && r.output.contains("no model configured"),
        "{}",
        r.output
    );
    assert!(!r.output.contains(TOKEN), "the token is never printed");
    let paths: Vec<String> = mock.with(|s| s.requests.iter().map(|r| r.path.clone()).collect());
    assert!(
        paths.iter().any(|p| p.ends_with("/actions/jobs/12/logs")),
        "{paths:?}"
    );
    assert!(paths.iter().any(|p| p == "/blob/logs/12"), "{paths:?}");
    assert!(
        mock.writes().is_empty(),
        "nothing posted without a verified patch"
    );

    // The PR head moved away from the checkout: the action reads the checkout's HEAD (git in
    // the container, on a workspace it does not own) and repairs nothing.
    let moved = "0123456789abcdef0123456789abcdef01234567";
    mock.with(|s| s.prs.get_mut(&2).unwrap().head_sha = moved.into());
    let r = run_like_the_runner(
        &image.0,
        root,
        &mock.url(),
        "issue_comment",
        &fix_command_event(),
        Some("scripted:/github/home/demo-fix.yaml"),
    );
    assert_eq!(r.code, 0, "{}", r.output);
    assert!(
        r.output.contains(&format!(
            "is at {} but the commit to repair is {}",
            &sha[..12],
            &moved[..12]
        )),
        "{}",
        r.output
    );
    assert!(
        sandbox_tags(&r.output).is_empty(),
        "no sandbox: {}",
        r.output
    );
    mock.with(|s| {
        assert!(s.reviews.is_empty() && s.comments.is_empty());
        s.prs.get_mut(&2).unwrap().head_sha = sha.clone();
        s.reactions.clear();
        s.requests.clear();
    });

    // `/patchloop fix` from a writer, with the scripted model: the containerised action builds
    // the sandbox image through the socket, repairs, verifies, and posts the review.
    let t1 = Instant::now();
    let r = run_like_the_runner(
        &image.0,
        root,
        &mock.url(),
        "issue_comment",
        &fix_command_event(),
        Some("scripted:/github/home/demo-fix.yaml"),
    );
    let tags = sandbox_tags(&r.output);
    let _images = RemoveImages(tags.clone());
    eprintln!("containerised repair: {:.1} s", t1.elapsed().as_secs_f64());
    assert_eq!(r.code, 0, "{}", r.output);
    assert!(
        !tags.is_empty(),
        "the sandbox image was prepared: {}",
        r.output
    );
    assert!(mock.violations().is_empty(), "{:?}", mock.violations());
    assert!(!r.output.contains(TOKEN), "the token is never printed");
    let comment_id = 492700400u64;
    mock.with(|s| {
        assert_eq!(
            s.reactions,
            vec![(comment_id, "eyes".into()), (comment_id, "rocket".into())]
        );
        assert_eq!(s.reviews.len(), 1);
        let review = &s.reviews[0];
        assert_eq!(review["commit_id"], sha.as_str());
        assert_eq!(review["event"], "COMMENT");
        let comments = review["comments"].as_array().unwrap();
        assert_eq!(comments.len(), 1, "{review}");
        assert_eq!(comments[0]["path"], "stats/median.py");
        assert_eq!(comments[0]["line"], 7);
        assert!(
            comments[0]["body"]
                .as_str()
                .unwrap()
                .starts_with(&format!("```suggestion\n{}\n```\n", FIXED_LINES.join("\n"))),
            "{review}"
        );
        assert_eq!(s.comments.len(), 1);
        let status = &s.comments[0].2;
        assert!(
            status.starts_with("### patchloop: verified fix")
                && status.contains("patchloop verification: `verified`")
                && status.contains("Model `scripted:/github/home/demo-fix.yaml")
                && status.contains("<details><summary>Patch and environment</summary>")
                && status.contains(" -c <harness ini> --rootdir "),
            "{status}"
        );
    });
    let o = &r.outputs;
    assert_eq!(o["verdict"], "verified", "{o:?}");
    assert!(o["comment-url"].contains("issuecomment-"), "{o:?}");
    // The outputs name files a later step finds from the workspace, on the host too.
    let patch = std::fs::read_to_string(root.join("workspace").join(&o["patch-path"]))
        .unwrap_or_else(|e| panic!("patch-path {:?} not in the workspace: {e}", o["patch-path"]));
    assert!(patch.contains(&format!("+{}", FIXED_LINES[2])), "{patch}");
    assert!(root.join("workspace").join(&o["receipt-path"]).is_file());
    // Nothing root-owned is left in the workspace: the runner's user can clean it.
    {
        use std::os::unix::fs::MetadataExt;
        let mut stack = vec![root.join("workspace")];
        while let Some(p) = stack.pop() {
            let m = std::fs::symlink_metadata(&p).unwrap();
            assert_eq!((m.uid(), m.gid()), (1001, 1001), "{}", p.display());
            if m.is_dir() {
                stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
            }
        }
    }
    assert!(
        r.summary.contains("| `verified` | suggest |"),
        "{}",
        r.summary
    );
    // Every sandbox and verification container the action started is gone.
    assert_eq!(wait_for_no_leftovers(&sha), Vec::<String>::new());
    eprintln!("whole test: {:.1} s", t0.elapsed().as_secs_f64());
}
