//! `patchloop fix` without named targets on a repository whose CI tests with another Python
//! than the offline image's. Where an image of the CI's Python can be had (3.13: Debian trixie's
//! offline base, debootstrapped once per machine), the failing tests run again on it: one that
//! passes there is environmental. Where none can be had (3.8: no registry here, no Debian suite
//! ships it), a failure whose traceback ends in the standard library is suspected
//! environmental, and the output says why no run on 3.8 was made. Either way it is said in
//! fix's output, given to the model as not its task, not a target of the verdict, and the real
//! bug is repaired and verified (a scripted model plays the fix). Needs Docker (fails without
//! it); the 3.13 test needs root and deb.debian.org the first time (debootstrap of trixie).

use std::path::Path;

use crate::github_common::demo::{RemoveImages, sandbox_tags};

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

/// `fix` on a copy of a fixture (as `as_name`) with the scripted model that fixes `double()`:
/// (exit code, stdout, stderr, the receipt, the trajectory).
async fn fix(
    fixture: &str,
    as_name: &str,
    extra: &[&str],
) -> (Option<i32>, String, String, serde_json::Value, String) {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join(as_name);
    copy_dir(&manifest.join("tests/fixtures").join(fixture), &root);
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
        .args(extra)
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&run.stderr).into_owned();
    let receipt = std::fs::read_to_string(out.join("receipt.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(serde_json::Value::Null);
    let trajectory = std::fs::read_to_string(out.join("trajectory.jsonl")).unwrap_or_default();
    (run.status.code(), stdout, stderr, receipt, trajectory)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_that_pass_on_the_ci_python_are_not_targets() {
    let (code, stdout, stderr, receipt, trajectory) =
        fix("env-python-ci", "env-python-ci-fix", &[]).await;
    let _cleanup = RemoveImages(sandbox_tags(&stderr));
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // test_pairs' traceback ends in the repository's own code (chunks/__init__.py): by its
    // traceback it would be a target. It passes on 3.13, so it is not.
    assert!(
        stderr.contains("environment check: the failing tests ran again on the CI's Python 3.13 (patchloop-sandbox:")
            && stderr.contains("environmental (passed there, not targets): tests/test_chunks.py::test_pairs; failed there too (targets): tests/test_calc.py::test_double"),
        "{stderr}"
    );
    assert!(
        stderr.contains("environmental (not targets): ")
            && stderr
                .contains("- tests/test_chunks.py::test_pairs: passes on the CI's Python 3.13"),
        "{stderr}"
    );
    assert!(
        stderr.contains("targets: tests/test_calc.py::test_double\n")
            && stderr.contains(
                "pre-existing failures (not required to pass): tests/test_chunks.py::test_pairs"
            ),
        "{stderr}"
    );
    assert_eq!(receipt["verdict"], "verified", "{receipt:#}\n{stderr}");
    let note = receipt["image"]["note"].as_str().unwrap_or_default();
    assert!(
        note.contains("environment check: the failing tests ran again on the CI's Python 3.13"),
        "{note}"
    );
    assert!(
        trajectory.contains("pass on the CI's Python 3.13 (environmental); they are not your task"),
        "{trajectory}"
    );
}

/// The same checkout without the second run: test_pairs' traceback ends in the repository, so
/// it is a target, and the fix of the real bug alone is not enough.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_the_second_run_a_failure_of_another_python_is_a_target() {
    let (code, stdout, stderr, _, _) = fix(
        "env-python-ci",
        "env-python-ci-off",
        &["--ci-python", "off"],
    )
    .await;
    let _cleanup = RemoveImages(sandbox_tags(&stderr));
    assert_eq!(code, Some(1), "{stdout}\n{stderr}");
    assert!(
        stderr.contains("environment check: no run on the CI's Python (--ci-python off); by their tracebacks, suspected environmental (not targets): none"),
        "{stderr}"
    );
    assert!(
        stderr.contains(
            "targets: tests/test_calc.py::test_double, tests/test_chunks.py::test_pairs\n"
        ),
        "{stderr}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_of_another_python_are_not_targets() {
    let (code, stdout, stderr, receipt, trajectory) =
        fix("env-python", "env-python-fix", &[]).await;
    let _cleanup = RemoveImages(sandbox_tags(&stderr));
    assert_eq!(code, Some(0), "{stdout}\n{stderr}");
    // No image of Python 3.8 can be had here, and the output says why.
    assert!(
        stderr.contains(
            "environment check: no run on the CI's Python (python:3.8-slim cannot be pulled"
        ) && stderr.contains("no Debian suite ships Python 3.8"),
        "{stderr}"
    );
    assert!(
        stderr.contains("suspected environmental (not targets)")
            && stderr.contains("tests/test_legacy.py::test_find_a_stdlib_module"),
        "{stderr}"
    );
    assert!(
        stderr.contains("the repository tests with Python 3.8"),
        "{stderr}"
    );
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
    assert!(
        trajectory.contains("they are not your task"),
        "{trajectory}"
    );
}
