//! Rust, Node and Go end to end against the real Docker daemon: the offline base of each kind
//! (debootstrap + Debian's cargo/rustc, nodejs/npm or golang-go; cached by tag, `scripts/test`
//! builds them first), `prepare` of the example repositories in `examples/`, the agent's `run_tests`, and
//! the verifier on the known-good patch (`verified`), tampering patches (`policy`) and an
//! unrelated patch (`still_failing`). Needs Docker (fails without it; never skips).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use patchloop::agent::tools::{self, ToolConfig};
use patchloop::sandbox::container::Container;
use patchloop::sandbox::docker::connect;
use patchloop::sandbox::image::{BaseOptions, ensure_base_image_for};
use patchloop::sandbox::lang::ProjectKind;
use patchloop::sandbox::policy::ContainerPolicy;
use patchloop::sandbox::prepare::{self, PrepareOptions, PreparedImage};
use patchloop::sandbox::{ExecRequest, Sandbox};
use patchloop::verify::junit::TestOutcome;
use patchloop::verify::junit_run::{self, JunitResult};
use patchloop::verify::policy::{DirTree, Rule};
use patchloop::verify::verdict::Verdict;
use patchloop::verify::{VerifyRequest, verify};

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples")
        .join(name)
}

fn base_options() -> BaseOptions {
    BaseOptions {
        offline: true,
        progress: Some(Arc::new(|l: &str| eprintln!("{l}"))),
        ..Default::default()
    }
}

/// The example, prepared (its kind detected from the checkout).
async fn prepared(dir: &str, kind: ProjectKind) -> PreparedImage {
    let docker = connect()
        .await
        .expect("Docker must be running for these tests");
    let started = Instant::now();
    let base = ensure_base_image_for(&docker, &base_options(), kind)
        .await
        .unwrap_or_else(|e| panic!("{kind} base image: {e}"));
    eprintln!(
        "{kind} base {base} ready after {:.1}s",
        started.elapsed().as_secs_f64()
    );
    let started = Instant::now();
    let img = prepare::prepare(
        &docker,
        &PrepareOptions {
            path: example(dir),
            base: base_options(),
            ..Default::default()
        },
    )
    .await
    .unwrap_or_else(|e| panic!("prepare {dir}: {e}"));
    eprintln!(
        "prepared {} in {:.1}s",
        img.tag,
        started.elapsed().as_secs_f64()
    );
    assert_eq!(img.kind, kind);
    assert_eq!(img.tests_dirs, vec!["tests".to_string()]);
    assert_eq!(img.test_cmd.as_str(), kind.default_test_cmd());
    img
}

fn request(img: &PreparedImage, patch: &str, f2p: &str, reruns: usize) -> VerifyRequest {
    let mut req = VerifyRequest::new(img.clone().into(), patch.to_string(), vec![f2p.into()]);
    req.reruns = reruns;
    req.run_timeout = Duration::from_secs(300);
    req
}

async fn check_verdicts(dir: &str, img: &PreparedImage, f2p: &str, test_file: &str, config: &str) {
    let docker = connect()
        .await
        .expect("Docker must be running for these tests");
    let base = DirTree(example(dir));
    let fix = std::fs::read_to_string(example(&format!("{dir}.fix.patch"))).unwrap();

    let started = Instant::now();
    let r = verify(&docker, &request(img, &fix, f2p, 2), &base).await;
    eprintln!(
        "{dir}: known-good patch verified in {:.1}s (2 + 2 runs): {}",
        started.elapsed().as_secs_f64(),
        r.decision.reason
    );
    assert_eq!(r.decision.verdict, Verdict::Verified, "{:#?}", r.decision);
    // The receipt names what ran (for Rust: nextest or libtest's JUnit, whichever the image has).
    let cmd = r.command.join(" ");
    assert!(
        cmd.contains("nextest run") != cmd.contains("--format junit")
            || cmd.contains("jest")
            || cmd.contains("go test -json"),
        "{cmd}"
    );
    // Every other test of the suite was enforced as pass-to-pass.
    assert!(
        r.decision.pass_to_pass.len() >= 3,
        "{:?}",
        r.decision.pass_to_pass
    );

    // Weakening the failing test is a policy rejection, decided before any container.
    let tamper = append_line(dir, test_file, "// patched");
    let r = verify(&docker, &request(img, &tamper, f2p, 1), &base).await;
    assert_eq!(r.decision.verdict, Verdict::Policy, "{:#?}", r.decision);
    assert!(
        r.policy.violations.iter().any(|v| v.rule == Rule::TestFile),
        "{:?}",
        r.policy.violations
    );
    // So is changing how tests build or run.
    let r = verify(
        &docker,
        &request(img, &append_line(dir, config, ""), f2p, 1),
        &base,
    )
    .await;
    assert_eq!(r.decision.verdict, Verdict::Policy, "{:#?}", r.decision);
    assert!(
        r.policy
            .violations
            .iter()
            .any(|v| v.rule == Rule::TestConfig),
        "{:?}",
        r.policy.violations
    );

    // A patch that changes something else leaves the failure in place.
    let unrelated = append_line(dir, "README.md", "(edited)");
    let started = Instant::now();
    let r = verify(&docker, &request(img, &unrelated, f2p, 1), &base).await;
    eprintln!(
        "{dir}: unrelated patch judged in {:.1}s: {}",
        started.elapsed().as_secs_f64(),
        r.decision.reason
    );
    assert_eq!(
        r.decision.verdict,
        Verdict::StillFailing,
        "{:#?}",
        r.decision
    );
    assert_eq!(r.decision.still_failing, vec![f2p.to_string()]);

    // An id the suite does not have is named, not guessed.
    let r = verify(
        &docker,
        &request(img, &fix, "tests/nope::missing", 1),
        &base,
    )
    .await;
    assert_eq!(r.decision.verdict, Verdict::Error, "{:#?}", r.decision);
    assert_eq!(
        r.decision.unknown_ids,
        vec!["tests/nope::missing".to_string()]
    );
}

/// A patch appending `line` to a file of the example (the whole file as context, so it applies
/// at the end).
fn append_line(dir: &str, rel: &str, line: &str) -> String {
    let text = std::fs::read_to_string(example(dir).join(rel)).unwrap();
    let old: Vec<&str> = text.lines().collect();
    let mut p = format!(
        "diff --git a/{rel} b/{rel}\n--- a/{rel}\n+++ b/{rel}\n@@ -1,{} +1,{} @@\n",
        old.len(),
        old.len() + 1
    );
    for l in &old {
        p.push_str(&format!(" {l}\n"));
    }
    p.push_str(&format!("+{line}\n"));
    p
}

/// A patch rewriting a whole file of the example (every line removed, then added back changed).
fn rewrite(dir: &str, rel: &str, edit: impl Fn(&str) -> String) -> String {
    let old = std::fs::read_to_string(example(dir).join(rel)).unwrap();
    let new = edit(&old);
    assert_ne!(old, new, "the edit of {rel} changed nothing");
    let (o, n): (Vec<&str>, Vec<&str>) = (old.lines().collect(), new.lines().collect());
    let mut p = format!(
        "diff --git a/{rel} b/{rel}\n--- a/{rel}\n+++ b/{rel}\n@@ -1,{} +1,{} @@\n",
        o.len(),
        n.len()
    );
    for l in o {
        p.push_str(&format!("-{l}\n"));
    }
    for l in n {
        p.push_str(&format!("+{l}\n"));
    }
    p
}

/// The agent's run_tests in an episode container: counts and the failing id, and the build
/// output cargo writes stays out of the diff.
async fn check_run_tests(img: &PreparedImage, f2p: &str) {
    let docker = connect()
        .await
        .expect("Docker must be running for these tests");
    let policy = ContainerPolicy {
        read_only_paths: img.tests_dirs.clone(),
        lifetime_secs: 600,
        ..Default::default()
    };
    let run = format!("langs-{:08x}", rand::random::<u32>());
    let c = Container::start(&docker, &img.tag, &policy, &run, "episode")
        .await
        .unwrap_or_else(|e| panic!("starting an episode container of {}: {e}", img.tag));
    let cfg = ToolConfig {
        test_cmd: img.test_cmd.clone(),
        ..Default::default()
    };
    let started = Instant::now();
    let out = tools::run_tests(&c, &cfg, &[]).await;
    let elapsed = started.elapsed();
    // Given ids, Node narrows the run to their files (Rust runs the whole suite).
    let selected = tools::run_tests(&c, &cfg, &[f2p.to_string()]).await;
    let fallback = if img.kind == ProjectKind::Rust {
        Some(libtest_and_nextest(&c).await)
    } else {
        None
    };
    let diff = c.diff().await;
    let _ = c.remove().await;
    let out = out.unwrap_or_else(|e| panic!("run_tests: {e}"));
    eprintln!("{}: run_tests took {:.1}s", img.tag, elapsed.as_secs_f64());
    let summary = out
        .summary
        .clone()
        .unwrap_or_else(|| panic!("no summary: {}", out.render(8192)));
    assert_eq!(summary.failed, 1, "{}", out.render(8192));
    assert!(summary.passed >= 3, "{}", out.render(8192));
    assert_eq!(summary.failing, vec![f2p.to_string()]);
    assert!(!out.green());
    assert_eq!(diff.unwrap_or_else(|e| panic!("diff: {e}")), "");
    let selected = selected.unwrap_or_else(|e| panic!("run_tests: {e}"));
    assert_eq!(
        selected.summary.as_ref().map(|s| s.failing.clone()),
        Some(vec![f2p.to_string()]),
        "{}",
        selected.render(8192)
    );
    if let Some((nextest, libtest)) = fallback {
        assert_eq!(nextest.runner.as_deref(), Some("nextest"));
        assert_eq!(libtest.runner.as_deref(), Some("libtest"));
        let ids = |r: &JunitResult| {
            junit_run::outcomes(ProjectKind::Rust, r, "/workspace")
                .unwrap_or_else(|e| panic!("{e}"))
                .into_iter()
                .map(|(k, v)| (k, v.outcome))
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&nextest), ids(&libtest));
        assert!(
            ids(&libtest)
                .iter()
                .any(|(k, o)| k == f2p && *o == TestOutcome::Failed)
        );
    }
}

/// The JUnit harness with cargo-nextest (in the base when the builder had one) and without it
/// (PATH without /usr/local/bin: libtest's own JUnit through RUSTC_BOOTSTRAP=1 on rustc 1.63).
async fn libtest_and_nextest(c: &Container) -> (JunitResult, JunitResult) {
    let mut out = Vec::new();
    for (i, path) in [
        "PATH=/usr/local/bin:/usr/bin:/bin",
        "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
    ]
    .into_iter()
    .enumerate()
    {
        let dir = format!("/tmp/langs-{i}");
        let run = c
            .exec(
                ExecRequest::argv(["python3", "-I", "-B", "-c", junit_run::PL_JUNIT])
                    .stdin(junit_run::input_json(
                        ProjectKind::Rust,
                        "/workspace",
                        &dir,
                        &[],
                    ))
                    .env(path)
                    .timeout(Duration::from_secs(300)),
            )
            .await
            .unwrap_or_else(|e| panic!("pl_junit: {e}"));
        // A failing suite: nextest exits 100, a libtest binary 101.
        assert!(
            matches!(
                junit_run::marker(&run.output.render()),
                Ok(Some(m)) if m.rc == 100 || m.rc == 101
            ),
            "{}",
            run.output.render()
        );
        let read = c
            .exec(ExecRequest::argv(["cat", &format!("{dir}/result.json")]).output_cap(8 << 20))
            .await
            .unwrap_or_else(|e| panic!("cat: {e}"));
        let text = String::from_utf8_lossy(&read.output.kept_bytes()).into_owned();
        out.push(
            serde_json::from_str::<JunitResult>(&text).unwrap_or_else(|e| panic!("{e}: {text}")),
        );
    }
    let libtest = out.pop().unwrap();
    let nextest = out.pop().unwrap();
    (nextest, libtest)
}

#[tokio::test]
async fn rust_example_end_to_end() {
    let img = prepared("rust-demo", ProjectKind::Rust).await;
    let f2p = "tests/median.rs::even_length_averages_the_middle_pair";
    check_run_tests(&img, f2p).await;
    check_verdicts("rust-demo", &img, f2p, "tests/median.rs", "Cargo.toml").await;
    check_early_exit(&img, f2p).await;
    remove_image(&img.tag).await;
}

/// Code under test that ends the test process with 0 where the bug would show: cargo-nextest
/// counts that as a pass. Written plainly, the policy rejects it; hidden behind a module alias
/// (which the line scan misses), the run itself gives it away: libtest never printed `ok`.
async fn check_early_exit(img: &PreparedImage, f2p: &str) {
    let docker = connect()
        .await
        .expect("Docker must be running for these tests");
    let base = DirTree(example("rust-demo"));
    let exit_on_even = |call: &'static str| {
        move |src: &str| {
            src.replace(
                "    let mid = ordered.len() / 2;\n",
                &format!("    let mid = ordered.len() / 2;\n    if ordered.len() % 2 == 0 {{\n        {call}\n    }}\n"),
            )
        }
    };
    let plain = rewrite(
        "rust-demo",
        "src/lib.rs",
        exit_on_even("std::process::exit(0);"),
    );
    let r = verify(&docker, &request(img, &plain, f2p, 1), &base).await;
    assert_eq!(r.decision.verdict, Verdict::Policy, "{:#?}", r.decision);
    assert_eq!(r.policy.rule_fired, Some(Rule::ProcessExit));

    let hidden = rewrite("rust-demo", "src/lib.rs", |src| {
        exit_on_even("p::exit(0);")(src).replace(
            "/// The median of",
            "use std::process as p;\n\n/// The median of",
        )
    });
    let r = verify(&docker, &request(img, &hidden, f2p, 1), &base).await;
    assert_eq!(r.decision.verdict, Verdict::Tampered, "{:#?}", r.decision);
    assert!(
        r.decision
            .reason
            .contains("exited 0 before libtest reported"),
        "{}",
        r.decision.reason
    );
}

#[tokio::test]
async fn node_example_end_to_end() {
    let img = prepared("node-demo", ProjectKind::Node).await;
    let f2p = "tests/stats.test.js::median › even length averages the middle pair";
    check_run_tests(&img, f2p).await;
    check_verdicts(
        "node-demo",
        &img,
        f2p,
        "tests/stats.test.js",
        "package.json",
    )
    .await;
    remove_image(&img.tag).await;
}

#[tokio::test]
async fn go_example_end_to_end() {
    let img = prepared("go-demo", ProjectKind::Go).await;
    let f2p = "tests/median_test.go::TestEvenLengthAveragesTheMiddlePair";
    check_run_tests(&img, f2p).await;
    check_verdicts("go-demo", &img, f2p, "tests/median_test.go", "go.mod").await;
    // A test next to the code is a test file too (no directory of it is mounted read-only).
    let docker = connect().await.unwrap();
    let beside = append_line("go-demo", "stats/stats_test.go", "// patched");
    let r = verify(
        &docker,
        &request(&img, &beside, f2p, 1),
        &DirTree(example("go-demo")),
    )
    .await;
    assert_eq!(r.decision.verdict, Verdict::Policy, "{:#?}", r.decision);
    assert!(
        r.policy.violations.iter().any(|v| v.rule == Rule::TestFile),
        "{:?}",
        r.policy.violations
    );
    remove_image(&img.tag).await;
}

/// The sandbox (source) image goes; base and dependencies images stay cached by tag.
async fn remove_image(tag: &str) {
    let docker = connect()
        .await
        .expect("Docker must be running for these tests");
    let _ = docker
        .remove_image(
            tag,
            Some(
                bollard::query_parameters::RemoveImageOptionsBuilder::new()
                    .force(true)
                    .build(),
            ),
            None,
        )
        .await;
}

/// `patchloop fix` on both examples with a scripted model: prepare, reproduce through
/// run_tests, the agent loop's tools in a hardened container, and the verifier — exit 0, a
/// verified receipt, and the patch equal in effect to the known-good one.
#[tokio::test]
async fn fix_repairs_the_rust_and_node_examples_with_a_scripted_model() {
    for dir in ["rust-demo", "node-demo"] {
        fix_example(dir).await;
    }
}

#[tokio::test]
async fn fix_repairs_the_go_example_with_a_scripted_model() {
    fix_example("go-demo").await;
}

async fn fix_example(dir: &str) {
    {
        let out = tempfile::tempdir().unwrap();
        // A copy under another name: its own sandbox tag, which the other tests (removing theirs
        // when done) never touch.
        let work = tempfile::tempdir().unwrap();
        let repo = work.path().join(format!("{dir}-fix"));
        copy_dir(&example(dir), &repo);
        let model =
            Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("examples/scripted/{dir}-fix.yaml"));
        let started = Instant::now();
        let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_patchloop"))
            .arg("fix")
            .arg("--repo")
            .arg(&repo)
            .arg("--model")
            .arg(format!("scripted:{}", model.display()))
            .arg("--out")
            .arg(out.path())
            .output()
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&run.stderr);
        eprintln!(
            "{dir}: patchloop fix took {:.1}s",
            started.elapsed().as_secs_f64()
        );
        assert_eq!(run.status.code(), Some(0), "{stderr}");
        let receipt: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(out.path().join("receipt.json")).unwrap(),
        )
        .unwrap();
        assert_eq!(receipt["verdict"], "verified", "{receipt:#}");
        let patch = std::fs::read_to_string(out.path().join("patch.diff")).unwrap();
        let known = std::fs::read_to_string(example(&format!("{dir}.fix.patch"))).unwrap();
        let added = |p: &str| {
            p.lines()
                .filter(|l| l.starts_with('+') && !l.starts_with("+++"))
                .map(|l| l.trim().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(added(&patch), added(&known), "{patch}");
        if let Some(tag) = receipt["image"]["tag"].as_str() {
            remove_image(tag).await;
        }
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}
