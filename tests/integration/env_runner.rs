//! Environment fidelity against the real Docker daemon: a project whose test requirements pin
//! a pytest that cannot import on the image's Python still verifies, with the harness's own
//! pytest (`/opt/patchloop/harness-site`), and the receipt says which pytest ran and why.
//! Preparing the fixture needs PyPI (its dependency layer downloads `pytest==3.0.7`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;

use patchloop::sandbox::docker::connect;
use patchloop::sandbox::image::BaseOptions;
use patchloop::sandbox::prepare::{self, PrepareOptions};
use patchloop::verify::policy::DirTree;
use patchloop::verify::receipt::render_markdown;
use patchloop::verify::verdict::Verdict;
use patchloop::verify::{VerifyRequest, verify};

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let dst = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &dst);
        } else {
            std::fs::copy(e.path(), dst).unwrap();
        }
    }
}

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/pinned-pytest")
}

const GOLD: &str = "--- a/shapes/__init__.py\n+++ b/shapes/__init__.py\n@@ -1,5 +1,5 @@\n def area(width, height):\n-    return width + height\n+    return width * height\n \n \n def perimeter(width, height):\n";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_pytest_that_cannot_import_runs_under_the_harness_pytest() {
    let docker = connect()
        .await
        .expect("Docker must be running for this test");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("shapes");
    copy_dir(&fixture(), &root);
    let img = prepare::prepare(
        &docker,
        &PrepareOptions {
            path: root.clone(),
            base: BaseOptions {
                progress: Some(Arc::new(|l: &str| eprintln!("{l}"))),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .await
    .unwrap_or_else(|e| panic!("prepare: {e}"));

    // The pin really replaced the venv's pytest with one that cannot import here: without the
    // harness site the hardened run (`python3 -I`, `import pytest`) writes no JUnit report.
    let o = Command::new("docker")
        .args(["run", "--rm", "--network", "none", &img.tag])
        .args(["python3", "-I", "-c", "import pytest"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "the project's pytest imported: {err}");
    assert!(err.contains("MutableMapping"), "{err}");

    let mut req = VerifyRequest::new(
        img.clone().into(),
        GOLD.into(),
        vec!["tests/test_shapes.py::test_area".into()],
    );
    req.reruns = 1;
    req.run_id = format!("test-env-runner-{:08x}", rand::random::<u32>());
    let r = verify(&docker, &req, &DirTree(root.clone())).await;
    assert_eq!(
        r.decision.verdict,
        Verdict::Verified,
        "{}",
        r.decision.reason
    );
    assert_eq!(
        r.decision.pass_to_pass,
        vec!["tests/test_shapes.py::test_perimeter".to_string()]
    );
    assert_eq!(r.runs.len(), 2);
    for run in &r.runs {
        let note = run.pytest.as_deref().unwrap_or("");
        assert!(note.starts_with("harness "), "{note}");
        assert!(
            note.contains("the project's pytest 3.0.7 is not usable: ImportError"),
            "{note}"
        );
    }
    let json = serde_json::to_value(&r).unwrap();
    assert!(
        json["runs"][0]["pytest"]
            .as_str()
            .is_some_and(|p| p.starts_with("harness ")),
        "{}",
        json["runs"][0]
    );
    let md = render_markdown(&r);
    assert!(md.contains("**Test runner**: pytest harness "), "{md}");

    let _ = Command::new("docker")
        .args(["rmi", "--no-prune", &img.tag])
        .output();
}

fn write(root: &Path, rel: &str, text: &str) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn label(tag: &str, key: &str) -> String {
    let o = Command::new("docker")
        .args(["image", "inspect", "-f"])
        .arg(format!("{{{{index .Config.Labels \"{key}\"}}}}"))
        .arg(tag)
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// CI runs the tests from the checkout with `PYTHONPATH=src` and never installs the project:
/// the image has no install layer and its test command carries the `PYTHONPATH`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tests_run_from_the_checkout_when_ci_does() {
    let docker = connect()
        .await
        .expect("Docker must be running for this test");
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ckout");
    write(
        &root,
        "pyproject.toml",
        "[build-system]\nrequires = [\"setuptools>=61\"]\nbuild-backend = \"setuptools.build_meta\"\n\n[project]\nname = \"ckout\"\nversion = \"0.1\"\nrequires-python = \">=3.8\"\n",
    );
    write(
        &root,
        "src/ckout/__init__.py",
        "def twice(x):\n    return 2 * x\n",
    );
    write(
        &root,
        "tests/test_twice.py",
        "from ckout import twice\n\n\ndef test_twice():\n    assert twice(2) == 4\n",
    );
    write(
        &root,
        ".github/workflows/ci.yml",
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/setup-python@v5\n        with:\n          python-version: \"3.11\"\n      - run: python -m pip install pytest\n      - run: python -m pytest -q tests\n        env:\n          PYTHONPATH: src\n",
    );
    let lines = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let sink = lines.clone();
    let img = prepare::prepare(
        &docker,
        &PrepareOptions {
            path: root.clone(),
            base: BaseOptions {
                progress: Some(Arc::new(move |l: &str| {
                    sink.lock().unwrap().push(l.to_string());
                })),
                ..Default::default()
            },
            ..Default::default()
        },
    )
    .await
    .unwrap_or_else(|e| panic!("prepare: {e}"));
    let out = lines.lock().unwrap().join("\n");
    assert_eq!(
        img.test_cmd.as_str(),
        "PYTHONPATH=src python -m pytest",
        "{out}"
    );
    assert!(
        out.contains("CI: install mode: tests run from the checkout"),
        "{out}"
    );
    assert!(out.contains("no install layer"), "{out}");
    assert_eq!(
        label(&img.tag, "patchloop.install"),
        label(&img.tag, "patchloop.deps"),
        "an install layer was built: {out}"
    );
    // Importable only the way CI makes it importable.
    let run = |script: &str| {
        Command::new("docker")
            .args([
                "run",
                "--rm",
                "--network",
                "none",
                &img.tag,
                "sh",
                "-c",
                script,
            ])
            .output()
            .unwrap()
    };
    assert!(!run("python3 -c 'import ckout'").status.success());
    let o = run("PYTHONPATH=src python3 -m pytest -q -p no:cacheprovider tests");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
    let _ = Command::new("docker")
        .args(["rmi", "--no-prune", &img.tag])
        .output();
}

/// Issue #24: the pinned-pytest repository's gold fix through `patchloop fix` (a scripted model
/// playing the gold patch). Every test run of the episode — the reproduction, the agent's
/// run_tests, the check after submit — and the verifier take the harness's pytest, and say so.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gold_fix_of_a_pinned_pytest_repository_is_verified_through_fix() {
    let dir = tempfile::tempdir().unwrap();
    // Its own name: its own sandbox tag, removed at the end.
    let root = dir.path().join("shapes-fix");
    copy_dir(&fixture(), &root);
    let out = dir.path().join("out");
    let model = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/scripted/pinned-pytest-fix.yaml");
    let run = tokio::process::Command::new(env!("CARGO_BIN_EXE_patchloop"))
        .arg("fix")
        .arg("--repo")
        .arg(&root)
        .arg("--model")
        .arg(format!("scripted:{}", model.display()))
        .args(["--strategy", "loop", "--reruns", "1", "--out"])
        .arg(&out)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stdout}\n{stderr}");
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("receipt.json")).unwrap()).unwrap();
    assert_eq!(receipt["verdict"], "verified", "{receipt:#}");
    for r in receipt["runs"].as_array().unwrap() {
        let note = r["pytest"].as_str().unwrap_or("");
        assert!(note.starts_with("harness "), "{note}");
    }
    // The agent saw which pytest ran: the reproduction and both of its run_tests calls.
    let trajectory = std::fs::read_to_string(out.join("trajectory.jsonl")).unwrap();
    assert!(
        trajectory.matches("Test runner: pytest harness").count() >= 2,
        "{trajectory}"
    );
    assert!(
        trajectory.contains("the project's pytest 3.0.7 is not usable"),
        "{trajectory}"
    );
    if let Some(tag) = receipt["image"]["tag"].as_str() {
        let _ = Command::new("docker")
            .args(["rmi", "--no-prune", tag])
            .output();
    }
}
