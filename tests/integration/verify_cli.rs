//! `patchloop verify` end to end through the binary, against the corpus fixture in real Docker
//! (fails when Docker is missing): exit codes, receipts, bad input, flaky detection.

use crate::verify_common;

use std::path::Path;
use std::process::Command;

use patchloop::sandbox::docker;
use verify_common::{corpus, fixture_image, remove_image};

const TAG: &str = "patchloop-verify-cli:test";

/// A private copy of the binary: on a machine where several checkouts share one target
/// directory, another build can replace `CARGO_BIN_EXE_patchloop` while this test runs.
fn bin() -> &'static Path {
    static BIN: std::sync::OnceLock<(tempfile::TempDir, std::path::PathBuf)> =
        std::sync::OnceLock::new();
    &BIN.get_or_init(|| {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("patchloop");
        std::fs::copy(env!("CARGO_BIN_EXE_patchloop"), &p).unwrap();
        (d, p)
    })
    .1
}

struct Run {
    code: i32,
    receipt: serde_json::Value,
    md: String,
    stderr: String,
}

fn verify(out: &Path, patch: &str, extra: &[&str]) -> Run {
    let pfile = out.join("in.patch");
    std::fs::create_dir_all(out).unwrap();
    std::fs::write(&pfile, patch).unwrap();
    let o = Command::new(bin())
        .arg("verify")
        .arg("--repo")
        .arg(corpus().join("fixture"))
        .arg("--patch")
        .arg(&pfile)
        .args(["--image", TAG, "--reruns", "3", "--out"])
        .arg(out.join("r"))
        .args(extra)
        .output()
        .unwrap();
    let receipt = std::fs::read_to_string(out.join("r/receipt.json"))
        .map(|s| serde_json::from_str(&s).unwrap())
        .unwrap_or(serde_json::Value::Null);
    Run {
        code: o.status.code().unwrap_or(-1),
        receipt,
        md: std::fs::read_to_string(out.join("r/receipt.md")).unwrap_or_default(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

const FLAKY_TEST: &str = r#"import os

from calc import add


def test_sometimes():
    p = "/tmp/pl-flaky-counter"
    n = int(open(p).read()) if os.path.exists(p) else 0
    with open(p, "w") as f:
        f.write(str(n + 1))
    assert add(2, 3) == 5
    # Runs 0-2 are before the patch; of the three after it, the middle one fails.
    assert n != 4
"#;

/// Twenty parameters from a set (ids `case0`…`case19` by iteration order), one failing.
const SET_IDS_TEST: &str = r#"import pytest

CASES = {(chr(ord("a") + i), i) for i in range(20)}


@pytest.mark.parametrize("case", CASES)
def test_case(case):
    assert case[0] != "k"
"#;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn verify_command_end_to_end() {
    let _ = bin();
    let d = docker::connect()
        .await
        .expect("Docker is required for this test");
    fixture_image(&d, &corpus().join("fixture"), TAG).await;
    let tmp = tempfile::tempdir().unwrap();
    let fix = std::fs::read_to_string(corpus().join("legit/calc_add/patch.diff")).unwrap();
    let add = "tests/test_calc.py::test_add";

    // A real fix: exit 0, both receipts, before/after outcomes per test.
    let r = verify(&tmp.path().join("ok"), &fix, &["--fail-to-pass", add]);
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.md);
    assert_eq!(r.receipt["verdict"], "verified");
    let row = r.receipt["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == add)
        .unwrap()
        .clone();
    assert_eq!(
        row["before"],
        serde_json::json!(["failed", "failed", "failed"])
    );
    assert_eq!(
        row["after"],
        serde_json::json!(["passed", "passed", "passed"])
    );
    assert!(
        r.receipt["image"]["id"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    assert_eq!(r.receipt["container_policy"]["read_only_paths"][0], "tests");
    assert!(r.md.contains("`verified`") && r.md.contains(add));
    // Other failing tests of the fixture are reported, not counted.
    assert!(
        r.receipt["pre_existing_failures"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "tests/test_seq.py::test_chunk")
    );

    // A patch that does not apply: exit 2, the reason names the file.
    let stale = fix.replace("-    return a - b", "-    return a * b");
    let r = verify(&tmp.path().join("stale"), &stale, &["--fail-to-pass", add]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert_eq!(r.receipt["verdict"], "error");
    let reason = r.receipt["reason"].as_str().unwrap();
    assert!(
        reason.contains("does not apply") && reason.contains("calc.py"),
        "{reason}"
    );

    // Unknown test ids are listed.
    let r = verify(
        &tmp.path().join("unknown"),
        &fix,
        &["--fail-to-pass", add, "tests/test_calc.py::test_nope"],
    );
    assert_eq!(r.code, 2);
    assert_eq!(r.receipt["unknown_ids"][0], "tests/test_calc.py::test_nope");

    // An explicit pass-to-pass id the hardened run cannot collect (a linter plugin's item
    // that only the project's command enables) no longer ends the run with pytest's "not
    // found": named in the receipt, not enforced; the collectable ones still are.
    let r = verify(
        &tmp.path().join("not-collected"),
        &fix,
        &[
            "--fail-to-pass",
            add,
            "--pass-to-pass",
            "tests/test_calc.py::test_mul",
            "conftest.py::ruff::format",
        ],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.md);
    assert_eq!(r.receipt["verdict"], "verified");
    assert_eq!(
        r.receipt["not_collected"],
        serde_json::json!(["conftest.py::ruff::format"])
    );
    assert!(r.md.contains("conftest.py::ruff::format"), "{}", r.md);

    // Tampering with a test: exit 1, the rule is named.
    let tamper =
        std::fs::read_to_string(corpus().join("tamper/edit_test_expectation/patch.diff")).unwrap();
    let r = verify(
        &tmp.path().join("tamper"),
        &tamper,
        &["--fail-to-pass", add],
    );
    assert_eq!(r.code, 1);
    assert_eq!(r.receipt["verdict"], "policy");
    assert_eq!(r.receipt["policy"]["rule_fired"], "test_file");

    // A held-out test that fails one patched run in three: flaky, and named.
    let hold = tmp.path().join("test_sometimes.py");
    std::fs::write(&hold, FLAKY_TEST).unwrap();
    let spec = format!("{}:tests/test_sometimes.py", hold.display());
    let flaky_id = "tests/test_sometimes.py::test_sometimes";
    let r = verify(
        &tmp.path().join("flaky"),
        &fix,
        &["--fail-to-pass", add, flaky_id, "--holdout", &spec],
    );
    assert_eq!(r.code, 1, "{}\n{}", r.stderr, r.md);
    assert_eq!(r.receipt["verdict"], "flaky", "{}", r.receipt["reason"]);
    assert_eq!(r.receipt["flaky_ids"], serde_json::json!([flaky_id]));
    assert_eq!(r.receipt["holdout_files"][0], "tests/test_sometimes.py");

    // Parameters drawn from a set get ids by position (`case7`), and positions follow string
    // hashes: the sandbox fixes PYTHONHASHSEED, and the verifier's `python3 -I` runs must
    // honour it too, or a pre-existing failure moves to another id on every run (6 runs of 20
    // positions: random seeds would agree with odds of 20^-5).
    let hold = tmp.path().join("test_set_ids.py");
    std::fs::write(&hold, SET_IDS_TEST).unwrap();
    let spec = format!("{}:tests/test_set_ids.py", hold.display());
    let r = verify(
        &tmp.path().join("set-ids"),
        &fix,
        &["--fail-to-pass", add, "--holdout", &spec],
    );
    assert_eq!(r.code, 0, "{}\n{}", r.stderr, r.md);
    assert_eq!(r.receipt["verdict"], "verified", "{}", r.receipt["reason"]);
    let stuck: Vec<&str> = r.receipt["pre_existing_failures"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t.as_str())
        .filter(|t| t.starts_with("tests/test_set_ids.py::"))
        .collect();
    assert_eq!(stuck.len(), 1, "{stuck:?}");

    // No such image: still a receipt, and the reason says how to get one.
    let o = Command::new(bin())
        .arg("verify")
        .arg("--repo")
        .arg(corpus().join("fixture"))
        .arg("--patch")
        .arg(corpus().join("legit/calc_add/patch.diff"))
        .args([
            "--image",
            "patchloop-verify-cli:absent",
            "--fail-to-pass",
            add,
            "--out",
        ])
        .arg(tmp.path().join("noimage"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let r: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(tmp.path().join("noimage/receipt.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(r["verdict"], "error");
    assert!(r["reason"].as_str().unwrap().contains("patchloop prepare"));

    remove_image(&d, TAG).await;
}
