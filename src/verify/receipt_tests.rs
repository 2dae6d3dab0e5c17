use super::*;
use crate::sandbox::ExecStatus;

#[test]
fn the_attempts_table_names_models_without_their_endpoint() {
    let mut s = String::new();
    render_attempts(&mut s, &[]);
    assert!(s.is_empty());
    render_attempts(
        &mut s,
        &[RepairAttempt {
            tier: 0,
            model: "openai:qwen2.5-coder-1.5b at http://10.1.2.3:8091/v1 (tool_choice Auto)".into(),
            strategy: crate::config::repair::Strategy::Candidates,
            result: crate::verify::attempts::Outcome::VERIFIED,
            tokens: 1200,
            model_ms: 15_250,
            wall_ms: 30_000,
            candidates: 4,
            passing: 1,
            ..Default::default()
        }],
    );
    assert!(s.contains("| 0 | `openai:qwen2.5-coder-1.5b` | candidates (4 drawn, 1 passed) | `verified` | 1200 | 15.2 s | 30.0 s |"), "{s}");
    assert!(!s.contains("10.1.2.3"), "{s}");
}
use crate::verify::junit::CaseResult;
use crate::verify::verdict::{GuardStatus, Inputs, RunScope, decide};
use std::time::Duration;

fn run(phase: Phase, index: usize, outs: &[(&str, TestOutcome)]) -> RunRecord {
    RunRecord {
        phase,
        index,
        scope: RunScope::All,
        exit: ExecStatus::Exited(0),
        duration: Duration::from_millis(1200),
        pytest: None,
        results: Some(
            outs.iter()
                .map(|(id, o)| {
                    (
                        id.to_string(),
                        CaseResult {
                            outcome: *o,
                            duration: Some(Duration::from_millis(3)),
                            message: None,
                        },
                    )
                })
                .collect(),
        ),
        junit_problem: None,
        guard: GuardStatus::Clean,
        external_findings: vec![],
        output_tail: String::new(),
    }
}

fn sample() -> Receipt {
    use TestOutcome::*;
    let f2p = vec!["tests/test_calc.py::test_add".to_string()];
    let before: Vec<_> = (0..3)
        .map(|i| {
            run(
                Phase::Before,
                i,
                &[
                    ("tests/test_calc.py::test_add", Failed),
                    ("tests/test_calc.py::test_sub", Passed),
                    ("tests/test_calc.py::test_div", Failed),
                ],
            )
        })
        .collect();
    let after: Vec<_> = (0..3)
        .map(|i| {
            run(
                Phase::After,
                i,
                &[
                    ("tests/test_calc.py::test_add", Passed),
                    ("tests/test_calc.py::test_sub", Passed),
                    ("tests/test_calc.py::test_div", Failed),
                ],
            )
        })
        .collect();
    let decision = decide(&Inputs {
        violations: &[],
        setup_error: None,
        fail_to_pass: &f2p,
        pass_to_pass: &[],
        before: &before,
        after: &after,
    });
    let patch = "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-    return a - b\n+    return a + b\n";
    let files = crate::verify::diff::parse(patch).unwrap();
    build(ReceiptInputs {
        decision,
        reruns: 3,
        image: ImageInfo {
            note: None,
            tag: "patchloop/demo:abc".into(),
            id: Some("sha256:0123".into()),
        },
        container_policy: ContainerPolicy {
            read_only_paths: vec!["tests".into()],
            ..Default::default()
        },
        patch: PatchInfo::new(patch, &files),
        violations: vec![],
        command: vec!["python3".into(), "-I".into()],
        holdout_files: vec![],
        fail_to_pass: &f2p,
        before,
        analysis: Default::default(),
        second_runner: None,
        fit: None,
        after,
        total_ms: 8000,
    })
}

#[test]
fn an_environment_note_reaches_both_receipts() {
    let mut r = sample();
    assert!(!render_markdown(&r).contains("environment note"));
    let json = serde_json::to_value(&r).unwrap();
    assert!(
        json["image"].get("note").is_none(),
        "absent when there is none"
    );
    r.image.note = Some("the repository tests with Python 3.9; this image has Python 3.11".into());
    assert!(
        render_markdown(&r).contains("- environment note: the repository tests with Python 3.9")
    );
    assert!(serde_json::to_value(&r).unwrap()["image"]["note"].is_string());
}

#[test]
fn markdown_matches_golden() {
    let md = render_markdown(&sample());
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/verify/testdata/receipt.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &md).unwrap();
    }
    let want = std::fs::read_to_string(&golden).unwrap();
    assert_eq!(md, want, "run with UPDATE_GOLDEN=1 to accept");
}

#[test]
fn json_carries_the_contract_fields() {
    let r = sample();
    let v: serde_json::Value = serde_json::to_value(&r).unwrap();
    assert_eq!(v["verdict"], "verified");
    assert_eq!(v["schema"], 1);
    assert_eq!(v["patch"]["files"][0]["path"], "calc.py");
    assert_eq!(v["patch"]["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(v["container_policy"]["hardening"], "hardened");
    assert_eq!(
        v["pre_existing_failures"][0],
        "tests/test_calc.py::test_div"
    );
    assert_eq!(v["runs"].as_array().unwrap().len(), 6);
    assert_eq!(v["runs"][0]["duration"], 1200);
    let add = v["tests"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["id"] == "tests/test_calc.py::test_add")
        .unwrap();
    assert_eq!(add["role"], "fail_to_pass");
    assert_eq!(add["before"][0], "failed");
    assert_eq!(add["after"][2], "passed");
    assert_eq!(v["tests_ms"], 7200);
}

#[test]
fn generalisation_layers_and_the_contract_are_in_both_receipts() {
    use crate::verify::evidence::{Finding, Layer as L};
    let mut r = sample();
    let md = render_markdown(&r);
    assert!(md.contains("| structural_signals | `not_run` |"), "{md}");
    assert!(md.contains("| hidden_targets | `not_applicable` | no test was held out |"));
    assert!(md.contains("**What `verified` covers**: the failing tests fail"));
    assert!(!md.contains("Fixed or fitted?"));
    let json = serde_json::to_value(&r).unwrap();
    assert!(json.get("generalisation").is_none());
    assert!(
        json["contract"]["verified_cannot"]
            .as_str()
            .unwrap()
            .contains("probe functions the patch adds")
    );
    let f = |i: usize| Finding {
        layer: L::BeyondTestedPoints,
        kind: "breaks_relation".into(),
        path: "pkg/m.py".into(),
        line: 4,
        evidence: format!("order((3, 1, {i}))"),
        input: Some("order([3, 1, 2])".into()),
        detail: "x".repeat(300),
    };
    let mut fit = FitReport::default();
    fit.merge(
        L::BeyondTestedPoints,
        "1 tested input".into(),
        (0..12).map(f).collect(),
        5,
    );
    fit.notes
        .insert(L::StructuralSignals, "1 changed file(s)".into());
    fit.not_run
        .insert(L::OracleSurface, "could not read the tests".into());
    r.fit = Some(fit);
    r.layers = layers(
        &[],
        &r.analysis,
        &r.runs,
        None,
        r.fit.as_ref(),
        &Hidden::default(),
    );
    let md = render_markdown(&r);
    assert!(md.contains("| `pkg/m.py:4` | beyond_tested_points | `breaks_relation` | `order((3, 1, 0))` | `order([3, 1, 2])` |"), "{md}");
    assert!(md.contains("2 more in receipt.json."));
    assert!(md.contains("| structural_signals | `clean` | 1 changed file(s) |"));
    assert!(md.contains("| oracle_surface | `not_run` | could not read the tests |"));
    assert!(md.contains("| beyond_tested_points | `findings` |"));
    assert!(
        md.contains("| model_review | `not_run` | off (set 'verify.review_model' to turn it on) |"),
        "{md}"
    );
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(
        json["generalisation"]["findings"].as_array().unwrap().len(),
        12
    );
    // Held-out tests: required, and named when the patch does not make them pass.
    let hidden = Hidden {
        files: vec!["tests/test_hidden.py".into()],
        targets: vec!["tests/test_hidden.py::test_x".into()],
        failing: vec!["tests/test_hidden.py::test_x".into()],
    };
    let l = fit_layer(L::HiddenTargets, None, &hidden);
    assert_eq!(
        (l.status, l.detail.as_str()),
        (
            "findings",
            "held-out test(s) the patch does not make pass: tests/test_hidden.py::test_x"
        )
    );
}

#[test]
fn write_creates_both_files() {
    let d = tempfile::tempdir().unwrap();
    write(&d.path().join("out"), &sample()).unwrap();
    assert!(d.path().join("out/receipt.json").is_file());
    let md = std::fs::read_to_string(d.path().join("out/receipt.md")).unwrap();
    assert!(md.contains("`verified`"));
}
