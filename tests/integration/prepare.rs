//! `patchloop prepare` against the real Docker daemon: what enters the image, the one-commit
//! baseline, labels, reuse of the dependencies layer, and bad input. Needs Docker (fails without
//! it). The first run on a machine without images builds the base offline (debootstrap, root).
//! The docker CLI is used here only to look inside the built images.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::time::Instant;

use patchloop::sandbox::docker::connect;
use patchloop::sandbox::image::{self, BaseOptions, HARNESS_FILES, ImageError};
use patchloop::sandbox::prepare::{self, PrepareOptions, PreparedImage};
use tokio::sync::OnceCell;

const CANARY: &str = "PL_CANARY_5f1e0c";

static BASE: OnceCell<String> = OnceCell::const_new();

fn base_options() -> BaseOptions {
    BaseOptions {
        progress: Some(Arc::new(|l: &str| eprintln!("{l}"))),
        ..Default::default()
    }
}

/// The base image, built once per test binary (tests run in parallel).
async fn base() -> String {
    BASE.get_or_init(|| async {
        let docker = connect()
            .await
            .expect("Docker must be running for these tests");
        image::ensure_base_image(&docker, &base_options())
            .await
            .unwrap_or_else(|e| panic!("base image: {e}"))
    })
    .await
    .clone()
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pyproj")
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

fn write(root: &Path, rel: &str, content: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, content).unwrap();
}

/// A copy of the fixture with everything a real checkout carries that must not be copied.
fn dirty_checkout() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("calcproj");
    copy_dir(&fixture(), &root);
    write(&root, ".git/HEAD", "ref: refs/heads/main\n");
    write(
        &root,
        ".git/config",
        &format!("[core]\n\tfsmonitor = echo {CANARY}\n"),
    );
    write(&root, ".venv/pyvenv.cfg", "home = /usr/bin\n");
    write(&root, ".venv/lib/site.py", "x = 1\n");
    write(&root, "tools/py/pyvenv.cfg", "home = /usr/bin\n");
    write(&root, "calc/__pycache__/ops.cpython-311.pyc", CANARY);
    write(&root, "calc/stale.pyc", CANARY);
    write(&root, ".env", &format!("TOKEN={CANARY}\n"));
    write(&root, ".env.local", &format!("TOKEN={CANARY}\n"));
    write(&root, "node_modules/x/index.js", CANARY);
    write(&root, ".pytest_cache/v/cache/lastfailed", CANARY);
    write(&root, "calc.egg-info/PKG-INFO", CANARY);
    // Ignored by the fixture's .gitignore (*.log): dropped inside the build.
    write(&root, "answers.log", CANARY);
    dir
}

fn project(dir: &tempfile::TempDir) -> PathBuf {
    dir.path().join("calcproj")
}

async fn prepare_at(path: &Path) -> Result<PreparedImage, ImageError> {
    base().await;
    let docker = connect().await.expect("Docker must be running");
    prepare::prepare(
        &docker,
        &PrepareOptions {
            path: path.to_path_buf(),
            base: base_options(),
            ..Default::default()
        },
    )
    .await
}

/// Runs a shell script in a throwaway, network-less container of `image`; returns stdout.
fn run_in(image: &str, script: &str) -> String {
    let out = Command::new("docker")
        .args([
            "run",
            "--rm",
            "--network",
            "none",
            image,
            "sh",
            "-c",
            script,
        ])
        .output()
        .expect("docker CLI");
    assert!(
        out.status.success(),
        "script failed in {image}: {script}\nstdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Tests that prepare the same fixture get the same content-addressed tag, and each removes
/// its images at the end: they take turns so one never removes an image another still uses.
static SAME_FIXTURE: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Removes the images a test made, also when it fails.
struct Images(Vec<String>);

impl Drop for Images {
    fn drop(&mut self) {
        for tag in &self.0 {
            let _ = Command::new("docker").args(["rmi", "-f", tag]).output();
        }
    }
}

#[tokio::test]
async fn prepared_image_holds_the_clean_checkout_and_a_one_commit_baseline() {
    let _turn = SAME_FIXTURE.lock().await;
    let dir = dirty_checkout();
    let img = prepare_at(&project(&dir)).await.unwrap();
    let _cleanup = Images(vec![img.tag.clone()]);

    assert!(
        img.tag.starts_with("patchloop-sandbox:calcproj-"),
        "{}",
        img.tag
    );
    assert_eq!(img.tests_dirs, vec!["tests"]);
    assert_eq!(img.test_cmd.as_str(), "python -m pytest");
    assert_eq!(img.base, base().await);

    // Labels read back equal what prepare returned.
    let docker = connect().await.unwrap();
    let back = prepare::inspect_prepared(&docker, &img.tag).await.unwrap();
    assert_eq!(back.tests_dirs, img.tests_dirs);
    assert_eq!(back.test_cmd, img.test_cmd);
    assert_eq!(back.base, img.base);
    assert_eq!(back.image_id, img.image_id);

    let files = run_in(
        &img.tag,
        "cd /workspace && find . -path ./.git -prune -o -print | sort",
    );
    let files: Vec<&str> = files.lines().collect();
    assert_eq!(
        files,
        vec![
            ".",
            "./.gitignore",
            "./README.md",
            "./calc",
            "./calc/__init__.py",
            "./calc/_build_info.py",
            "./calc/ops.py",
            "./pyproject.toml",
            "./setup.py",
            "./tests",
            "./tests/test_ops.py",
            "./tools",
        ],
        "only the sources may be copied"
    );

    let report = run_in(
        &img.tag,
        r#"set -e
        cd /workspace
        echo "user=$(id -u):$(id -g)"
        echo "owner=$(stat -c %u:%g /workspace/calc/ops.py /workspace/.git | sort -u | tr '\n' ' ')"
        echo "commits=$(git rev-list --count HEAD)"
        echo "status=[$(git status --porcelain --ignored)]"
        echo "hooks=[$(ls .git/hooks)]"
        echo "baseline=$(git --git-dir=/opt/patchloop/baseline.git rev-parse HEAD) $(git rev-parse HEAD)"
        echo "baseline_owner=$(stat -c %u:%a /opt/patchloop/baseline.git)"
        touch /opt/patchloop/baseline.git/x 2>/dev/null && echo baseline_writable=yes || echo baseline_writable=no
        echo "harness_owner=$(stat -c %u:%a /opt/patchloop/harness/pl_guard.py)"
        echo "python=$(command -v python)"
        echo "grep=[$(grep -rl PL_CANARY_5f1e0c /workspace /opt/patchloop /opt/venv 2>/dev/null || true)]"
        python -m pytest -q -p no:cacheprovider >/tmp/out 2>&1 && echo tests=pass || { cat /tmp/out; echo tests=fail; }
        python -c 'import calc; print("calc=" + calc.__file__)'
        python -c 'import importlib.metadata as m; print("calc_version=" + m.version("calc"))'
        echo "editable_owner=$(stat -c %u /opt/patchloop/editable)"
        echo "generated_tracked=$(git ls-files calc/_build_info.py)"
        "#,
    );
    for expected in [
        "user=1000:1000",
        "owner=1000:1000 ",
        "commits=1",
        "status=[]",
        "hooks=[]",
        "baseline_owner=0:555",
        "baseline_writable=no",
        "harness_owner=0:444",
        "python=/opt/venv/bin/python",
        "grep=[]",
        "tests=pass",
        "calc=/workspace/calc/__init__.py",
        "calc_version=0.1.0",
        "editable_owner=0",
        "generated_tracked=calc/_build_info.py",
    ] {
        assert!(
            report.lines().any(|l| l == expected),
            "missing {expected:?} in:\n{report}"
        );
    }
    let heads: Vec<&str> = report
        .lines()
        .find_map(|l| l.strip_prefix("baseline="))
        .unwrap()
        .split(' ')
        .collect();
    assert_eq!(
        heads[0], heads[1],
        "baseline.git holds the workspace's commit"
    );

    let harness = run_in(&img.tag, "cat /opt/patchloop/harness/pl_guard.py");
    assert_eq!(harness, HARNESS_FILES[0].1);
}

#[tokio::test]
async fn source_only_change_reuses_the_dependencies_layer() {
    let _turn = SAME_FIXTURE.lock().await;
    let dir = dirty_checkout();
    let root = project(&dir);
    write(&root, "calc/extra.py", "EXTRA = 1\n");
    let first = prepare_at(&root).await.unwrap();
    let mut cleanup = Images(vec![first.tag.clone()]);
    let docker = connect().await.unwrap();
    let deps_of = |labels: Option<std::collections::HashMap<String, String>>| {
        labels
            .and_then(|l| l.get("patchloop.deps").cloned())
            .unwrap()
    };
    let first_deps = deps_of(
        docker
            .inspect_image(&first.tag)
            .await
            .unwrap()
            .config
            .unwrap()
            .labels,
    );

    write(
        &root,
        "calc/ops.py",
        "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    );
    std::fs::remove_file(root.join("calc/extra.py")).unwrap();
    let started = Instant::now();
    let second = prepare_at(&root).await.unwrap();
    let took = started.elapsed();
    cleanup.0.push(second.tag.clone());
    eprintln!("source-only rebuild took {took:?}");
    assert!(
        second.deps_reused,
        "a source change must reuse the dependencies image"
    );
    assert_ne!(second.tag, first.tag, "new source, new tag");
    let second_deps = deps_of(
        docker
            .inspect_image(&second.tag)
            .await
            .unwrap()
            .config
            .unwrap()
            .labels,
    );
    assert_eq!(second_deps, first_deps);
    let diff = run_in(
        &second.tag,
        "cd /workspace && git log --oneline | wc -l && grep -c 'a - b' calc/ops.py \
         && cat calc/_build_info.py && python -c 'import calc; print(calc.add(5, 3))' \
         && test ! -e calc/extra.py",
    );
    assert_eq!(diff, "1\n1\nBUILT = True\n2\n");

    // Same source again: the image itself is reused.
    let again = prepare_at(&root).await.unwrap();
    assert_eq!(again.tag, second.tag);
    assert_eq!(again.image_id, second.image_id);

    // A dependency-file change makes a new dependencies image.
    let pyproject = std::fs::read_to_string(root.join("pyproject.toml")).unwrap();
    write(
        &root,
        "pyproject.toml",
        &format!("{pyproject}\n# touched\n"),
    );
    let third = prepare_at(&root).await.unwrap();
    cleanup.0.push(third.tag.clone());
    let third_deps = deps_of(
        docker
            .inspect_image(&third.tag)
            .await
            .unwrap()
            .config
            .unwrap()
            .labels,
    );
    let third_install = docker
        .inspect_image(&third.tag)
        .await
        .unwrap()
        .config
        .unwrap()
        .labels
        .unwrap()["patchloop.install"]
        .clone();
    assert!(
        third_install.starts_with("patchloop-install:"),
        "{third_install}"
    );
    cleanup.0.push(third_install);
    cleanup.0.push(third_deps.clone());
    assert!(!third.deps_reused);
    assert_ne!(third_deps, first_deps);
}

#[tokio::test]
async fn bad_input_is_reported_with_the_fix() {
    let docker = connect().await.expect("Docker must be running");
    let opts = |path: PathBuf| PrepareOptions {
        path,
        base: base_options(),
        ..Default::default()
    };

    let err = prepare::prepare(&docker, &opts("/nonexistent/checkout".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, ImageError::BadPath { .. }), "{err}");

    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "README.md", "no python here");
    let file = dir.path().join("README.md");
    let err = prepare::prepare(&docker, &opts(file)).await.unwrap_err();
    assert!(err.to_string().contains("not a directory"), "{err}");

    let err = prepare::prepare(&docker, &opts(dir.path().into()))
        .await
        .unwrap_err();
    assert!(matches!(err, ImageError::Unsupported { .. }), "{err}");

    write(dir.path(), "pkg/__init__.py", "");
    let err = prepare::prepare(&docker, &opts(dir.path().into()))
        .await
        .unwrap_err();
    assert!(matches!(err, ImageError::NoTests { .. }), "{err}");
    assert!(err.to_string().contains("--tests-dir"), "{err}");

    let mut with_missing_dir = opts(dir.path().into());
    with_missing_dir.tests_dirs = vec!["spec".into()];
    let err = prepare::prepare(&docker, &with_missing_dir)
        .await
        .unwrap_err();
    assert!(matches!(err, ImageError::BadTestsDir { .. }), "{err}");
}

/// Nothing narrower declares the test dependencies, so a top-level requirements-dev.txt is
/// installed; its broken line is retried alone, left out and named, and the image still works
/// (the tests are collected without it).
#[tokio::test]
async fn a_broken_requirement_line_is_left_out_and_named() {
    let _turn = SAME_FIXTURE.lock().await;
    let dir = dirty_checkout();
    let root = project(&dir);
    write(
        &root,
        "requirements-dev.txt",
        "-e .\nthis is not a requirement!!\n",
    );
    let img = prepare_at(&root).await.unwrap();
    let _cleanup = Images(vec![img.tag.clone()]);
    assert_eq!(img.deps_skipped, vec!["this is not a requirement!!"]);
    assert_eq!(
        img.deps_source.as_deref(),
        Some("requirements-dev.txt (nothing narrower declares the test dependencies)")
    );
    let back = prepare::inspect_prepared(&connect().await.unwrap(), &img.tag)
        .await
        .unwrap();
    assert_eq!(back.deps_skipped, img.deps_skipped);
    assert_eq!(back.deps_source, img.deps_source);
}

#[tokio::test]
async fn cli_prints_the_tag_on_stdout_and_exits_2_on_bad_input() {
    let _turn = SAME_FIXTURE.lock().await;
    base().await;
    let bin = env!("CARGO_BIN_EXE_patchloop");
    let out = Command::new(bin)
        .args(["prepare", "/nonexistent/x"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // (With a CARGO_TARGET_DIR shared between branches another branch's build can replace the
    // binary mid-run; the stderr shows it.)
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("/nonexistent/x"), "{stderr}");

    let dir = dirty_checkout();
    let out = Command::new(bin)
        .args([
            "prepare",
            "--test-cmd",
            "python -m pytest -x",
            "--tests-dir",
            "tests/",
        ])
        .arg(project(&dir))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let tag = stdout.trim().to_string();
    let _cleanup = Images(vec![tag.clone()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        stdout.lines().count(),
        1,
        "stdout is the tag alone: {stdout:?}"
    );
    assert!(tag.starts_with("patchloop-sandbox:"), "{tag}");
    let docker = connect().await.unwrap();
    let back = prepare::inspect_prepared(&docker, &tag).await.unwrap();
    assert_eq!(back.test_cmd.as_str(), "python -m pytest -x");
    assert_eq!(back.tests_dirs, vec!["tests"]);
}

/// The image honours the layout contract the sandbox engine relies on: in a hardened episode
/// container (read-only root, tests read-only, uid 1000, no network) the tests run, the tests
/// cannot be changed, and the harness diff shows exactly the agent's edit.
#[tokio::test]
async fn prepared_image_works_in_a_hardened_episode_container() {
    let _turn = SAME_FIXTURE.lock().await;
    use patchloop::sandbox::container::Container;
    use patchloop::sandbox::policy::ContainerPolicy;
    use patchloop::sandbox::{ExecRequest, Sandbox};

    let dir = dirty_checkout();
    let img = prepare_at(&project(&dir)).await.unwrap();
    let _cleanup = Images(vec![img.tag.clone()]);
    let docker = connect().await.unwrap();
    let policy = ContainerPolicy {
        read_only_paths: img.tests_dirs.clone(),
        ..Default::default()
    };
    let run_id = format!("prepare-e2e-{}", std::process::id());
    let c = Container::start(&docker, &img.tag, &policy, &run_id, "test")
        .await
        .unwrap();

    let tests = c
        .exec(ExecRequest::shell(format!(
            "{} -q -p no:cacheprovider",
            img.test_cmd
        )))
        .await
        .unwrap();
    assert!(tests.status.success(), "{}", tests.output.render());

    // The environment is CI's: no `TERM=dumb` (termcolor's tests expect colour on a mocked
    // tty), one string hash for every run.
    let env = c
        .exec(ExecRequest::shell(
            // What a test process sees (bash keeps an unexported TERM of its own).
            "python3 -c 'import os; e = os.environ; print(\"TERM=%s PYTHONHASHSEED=%s\" % (e.get(\"TERM\", \"unset\"), e.get(\"PYTHONHASHSEED\", \"unset\")))'",
        ))
        .await
        .unwrap();
    assert_eq!(
        env.output.render().trim(),
        "TERM=unset PYTHONHASHSEED=0",
        "{}",
        env.output.render()
    );

    let write_tests = c
        .exec(ExecRequest::shell("echo x >> tests/test_ops.py"))
        .await
        .unwrap();
    assert!(!write_tests.status.success(), "tests must be read-only");

    let edit = c
        .exec(ExecRequest::shell(
            // What a test run with coverage or Hypothesis leaves behind is not part of a
            // patch (an sdist ships no .gitignore to say so).
            "sed -i 's/a \\* b/b * a/' calc/ops.py && python -c 'import calc' \
             && printf 'SQLite format 3\\000' > .coverage && touch .coverage.host.1 coverage.xml \
             && mkdir -p htmlcov .hypothesis/examples .tox/py && touch htmlcov/index.html .hypothesis/examples/x .tox/py/log",
        ))
        .await
        .unwrap();
    assert!(edit.status.success(), "{}", edit.output.render());
    let diff = c.diff().await.unwrap();
    let changed: Vec<&str> = diff
        .lines()
        .filter(|l| l.starts_with("diff --git"))
        .collect();
    assert_eq!(
        changed,
        vec!["diff --git a/calc/ops.py b/calc/ops.py"],
        "{diff}"
    );
    assert!(diff.contains("+    return b * a"), "{diff}");
    c.remove().await.unwrap();
}
