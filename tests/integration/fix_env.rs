//! `patchloop fix` without named targets on a repository whose CI tests with another Python
//! than the offline image's: a failure whose traceback ends in the standard library is
//! suspected environmental — said in fix's output, given to the model as not its task, not a
//! target of the verdict — and the real bug is repaired and verified (a scripted model plays
//! the fix). Needs Docker (fails without it).

use std::path::Path;
use std::process::Command;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_of_another_python_are_not_targets() {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("env-python-fix");
    copy_dir(&manifest.join("tests/fixtures/env-python"), &root);
    let out = dir.path().join("out");
    let model = manifest.join("tests/fixtures/scripted/env-python-fix.yaml");
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
    assert!(
        stderr.contains("suspected environmental (not targets)")
            && stderr.contains("tests/test_legacy.py::test_find_a_stdlib_module"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the repository tests with Python 3.8"),
        "{stderr}"
    );
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("receipt.json")).unwrap()).unwrap();
    assert_eq!(receipt["verdict"], "verified", "{receipt:#}");
    // Only the real bug was the target; the environmental failure stayed pre-existing.
    assert!(
        stderr.contains("targets: tests/test_calc.py::test_double\n"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "pre-existing failures (not required to pass): tests/test_legacy.py::test_find_a_stdlib_module"
        ),
        "{stderr}"
    );
    let trajectory = std::fs::read_to_string(out.join("trajectory.jsonl")).unwrap();
    assert!(
        trajectory.contains("they are not your task"),
        "{trajectory}"
    );
    if let Some(tag) = receipt["image"]["tag"].as_str() {
        let _ = Command::new("docker")
            .args(["rmi", "--no-prune", tag])
            .output();
    }
}
