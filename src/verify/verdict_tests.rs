use super::*;
use crate::verify::policy::Rule;

#[test]
fn all_lists_every_verdict_once() {
    // A new variant fails this match to compile: add it to `ALL` too.
    let index = |v: Verdict| match v {
        Verdict::Verified => 0,
        Verdict::StillFailing => 1,
        Verdict::Regression => 2,
        Verdict::Flaky => 3,
        Verdict::Tampered => 4,
        Verdict::NeedsReview => 5,
        Verdict::Policy => 6,
        Verdict::NotReproducible => 7,
        Verdict::Error => 8,
    };
    let got: Vec<usize> = Verdict::ALL.iter().map(|v| index(*v)).collect();
    assert_eq!(got, (0..Verdict::ALL.len()).collect::<Vec<_>>());
}

/// A run record with these outcomes (exit 0 when all passed); shared with runner's tests.
pub(crate) fn run(phase: Phase, index: usize, outs: &[(&str, TestOutcome)]) -> RunRecord {
    RunRecord {
        phase,
        index,
        scope: RunScope::All,
        exit: ExecStatus::Exited(if outs.iter().all(|(_, o)| *o == TestOutcome::Passed) {
            0
        } else {
            1
        }),
        duration: Duration::from_millis(100),
        pytest: None,
        results: Some(
            outs.iter()
                .map(|(id, o)| {
                    (
                        id.to_string(),
                        CaseResult {
                            outcome: *o,
                            duration: None,
                            message: None,
                        },
                    )
                })
                .collect(),
        ),
        junit_problem: None,
        guard: GuardStatus::Clean,
        external_findings: Vec::new(),
        output_tail: String::new(),
    }
}

use TestOutcome::*;
const F: &str = "t.py::test_f";
const P: &str = "t.py::test_p";
const X: &str = "t.py::test_x";

fn before3() -> Vec<RunRecord> {
    (0..3)
        .map(|i| run(Phase::Before, i, &[(F, Failed), (P, Passed), (X, Failed)]))
        .collect()
}

fn decide_with(before: &[RunRecord], after: &[RunRecord]) -> Decision {
    decide(&Inputs {
        violations: &[],
        setup_error: None,
        fail_to_pass: &[F.to_string()],
        pass_to_pass: &[],
        before,
        after,
    })
}

fn after3(outs: &[(&str, TestOutcome)]) -> Vec<RunRecord> {
    (0..3).map(|i| run(Phase::After, i, outs)).collect()
}

#[test]
fn verified_with_pre_existing_failure_reported() {
    let d = decide_with(
        &before3(),
        &after3(&[(F, Passed), (P, Passed), (X, Failed)]),
    );
    assert_eq!(d.verdict, Verdict::Verified, "{}", d.reason);
    assert_eq!(d.pre_existing_failures, vec![X.to_string()]);
    assert_eq!(d.pass_to_pass, vec![P.to_string()]);
}

#[test]
fn still_failing_and_regression() {
    let d = decide_with(&before3(), &after3(&[(F, Failed), (P, Passed)]));
    assert_eq!(d.verdict, Verdict::StillFailing);
    assert_eq!(d.still_failing, vec![F.to_string()]);
    let d = decide_with(&before3(), &after3(&[(F, Skipped), (P, Passed)]));
    assert_eq!(d.verdict, Verdict::StillFailing, "skipped is not passed");
    let d = decide_with(&before3(), &after3(&[(F, Passed)]));
    assert_eq!(
        d.verdict,
        Verdict::Regression,
        "a vanished test is a regression"
    );
    assert_eq!(d.regressions, vec![P.to_string()]);
}

/// The focused plan: run 0 of each phase whole, the others only the fail-to-pass test.
fn focused(phase: Phase, full: &[(&str, TestOutcome)], f: TestOutcome) -> Vec<RunRecord> {
    (0..3)
        .map(|i| {
            if i == 0 {
                run(phase, 0, full)
            } else {
                RunRecord {
                    scope: RunScope::FailToPass,
                    ..run(phase, i, &[(F, f)])
                }
            }
        })
        .collect()
}

#[test]
fn focused_runs_judge_other_tests_on_the_full_runs_only() {
    let before = focused(
        Phase::Before,
        &[(F, Failed), (P, Passed), (X, Failed)],
        Failed,
    );
    let after = focused(
        Phase::After,
        &[(F, Passed), (P, Passed), (X, Failed)],
        Passed,
    );
    let d = decide_with(&before, &after);
    assert_eq!(d.verdict, Verdict::Verified, "{}", d.reason);
    assert_eq!(
        d.pass_to_pass,
        vec![P.to_string()],
        "P is missing only where unselected"
    );
    assert_eq!(d.pre_existing_failures, vec![X.to_string()]);
    assert!(d.reason.contains("in the 1 full run(s)"), "{}", d.reason);

    // A regression in the full patched run still counts.
    let after = focused(Phase::After, &[(F, Passed), (P, Failed)], Passed);
    assert_eq!(decide_with(&before, &after).verdict, Verdict::Regression);
    // The fail-to-pass test is still judged on every run: one focused failure is a flake.
    let mut after = focused(Phase::After, &[(F, Passed), (P, Passed)], Passed);
    after[2] = RunRecord {
        scope: RunScope::FailToPass,
        ..run(Phase::After, 2, &[(F, Failed)])
    };
    let d = decide_with(&before, &after);
    assert_eq!(d.verdict, Verdict::Flaky, "{}", d.reason);
    assert_eq!(d.flaky_ids, vec![F.to_string()]);
    // And it must fail in every unpatched run, focused ones included.
    let mut before = before.clone();
    before[1] = RunRecord {
        scope: RunScope::FailToPass,
        ..run(Phase::Before, 1, &[(F, Passed)])
    };
    assert_eq!(
        decide_with(&before, &after).verdict,
        Verdict::NotReproducible
    );
}

#[test]
fn flaky_names_the_flipping_ids() {
    let mut after = after3(&[(F, Passed), (P, Passed)]);
    after[1] = run(Phase::After, 1, &[(F, Failed), (P, Passed)]);
    let d = decide_with(&before3(), &after);
    assert_eq!(d.verdict, Verdict::Flaky);
    assert_eq!(d.flaky_ids, vec![F.to_string()]);
}

#[test]
fn not_reproducible_and_unknown_ids() {
    let mut before = before3();
    before[2] = run(Phase::Before, 2, &[(F, Passed), (P, Passed)]);
    let d = decide_with(&before, &after3(&[(F, Passed), (P, Passed)]));
    assert_eq!(d.verdict, Verdict::NotReproducible);
    assert_eq!(d.not_reproduced, vec![F.to_string()]);
    let d = decide(&Inputs {
        violations: &[],
        setup_error: None,
        fail_to_pass: &["nope.py::test".to_string()],
        pass_to_pass: &[],
        before: &before3(),
        after: &after3(&[]),
    });
    assert_eq!(d.verdict, Verdict::Error);
    assert_eq!(d.unknown_ids, vec!["nope.py::test".to_string()]);
}

#[test]
fn an_explicit_pass_to_pass_id_the_unpatched_run_did_not_collect_is_named_not_fatal() {
    let p2p = [P.to_string(), "conftest.py::ruff::format".to_string()];
    let decide_p2p = |after: &[RunRecord]| {
        decide(&Inputs {
            violations: &[],
            setup_error: None,
            fail_to_pass: &[F.to_string()],
            pass_to_pass: &p2p,
            before: &before3(),
            after,
        })
    };
    let d = decide_p2p(&after3(&[(F, Passed), (P, Passed)]));
    assert_eq!(d.verdict, Verdict::Verified, "{}", d.reason);
    assert_eq!(d.not_collected, ["conftest.py::ruff::format"]);
    assert_eq!(d.pass_to_pass, [P]);
    // The collected ones are still enforced.
    let d = decide_p2p(&after3(&[(F, Passed), (P, Failed)]));
    assert_ne!(d.verdict, Verdict::Verified);
    assert_eq!(d.regressions, [P]);
}

#[test]
fn tampering_beats_passing_results() {
    let mut after = after3(&[(F, Passed), (P, Passed)]);
    after[0].guard = GuardStatus::Tampered {
        findings: vec!["_pytest.python.Function.runtest replaced".into()],
    };
    let d = decide_with(&before3(), &after);
    assert_eq!(d.verdict, Verdict::Tampered);
    assert!(d.reason.contains("runtest"));
    // Exit 0 with no JUnit report is tampering, not an error.
    let mut after = after3(&[(F, Passed), (P, Passed)]);
    after[2].results = None;
    after[2].exit = ExecStatus::Exited(0);
    assert_eq!(decide_with(&before3(), &after).verdict, Verdict::Tampered);
    // A crash with a non-zero code is an error.
    after[2].exit = ExecStatus::Exited(139);
    assert_eq!(decide_with(&before3(), &after).verdict, Verdict::Error);
}

#[test]
fn policy_and_setup_errors_come_first() {
    let v = [Violation {
        rule: Rule::TestFile,
        path: "tests/t.py".into(),
        detail: "no".into(),
    }];
    let d = decide(&Inputs {
        violations: &v,
        setup_error: Some("x".into()),
        fail_to_pass: &[F.to_string()],
        pass_to_pass: &[],
        before: &[],
        after: &[],
    });
    assert_eq!(d.verdict, Verdict::Policy);
    assert!(d.reason.contains("test_file"));
    let d = decide(&Inputs {
        violations: &[],
        setup_error: Some("patch does not apply".into()),
        fail_to_pass: &[F.to_string()],
        pass_to_pass: &[],
        before: &[],
        after: &[],
    });
    assert_eq!(d.verdict, Verdict::Error);
}

#[test]
fn explicit_pass_to_pass_that_failed_before_is_not_a_regression() {
    let d = decide(&Inputs {
        violations: &[],
        setup_error: None,
        fail_to_pass: &[F.to_string()],
        pass_to_pass: &[X.to_string(), P.to_string()],
        before: &before3(),
        after: &after3(&[(F, Passed), (P, Passed), (X, Failed)]),
    });
    assert_eq!(d.verdict, Verdict::Verified, "{}", d.reason);
    assert_eq!(d.pre_existing_failures, vec![X.to_string()]);
}

#[test]
fn analysis_findings_turn_verified_into_needs_review_only() {
    let f = crate::verify::scan::Finding {
        path: "calc.py".into(),
        capability: crate::verify::scan::Capability::Tracing,
        line: 3,
        detail: "sys.settrace".into(),
        uses: 1,
    };
    let ok = Decision::new(Verdict::Verified, "all passed");
    let d = with_analysis(ok.clone(), std::slice::from_ref(&f));
    assert_eq!(d.verdict, Verdict::NeedsReview);
    assert!(
        d.reason.contains("calc.py:3: tracing (sys.settrace)"),
        "{}",
        d.reason
    );
    assert_eq!(with_analysis(ok, &[]).verdict, Verdict::Verified);
    let bad = Decision::new(Verdict::Tampered, "guard");
    assert_eq!(with_analysis(bad, &[f]).verdict, Verdict::Tampered);
    assert_eq!(crate::verify::cli::exit_code(Verdict::NeedsReview), 1);
}

#[test]
fn fit_findings_turn_verified_into_needs_review_with_the_evidence() {
    use crate::verify::evidence::{Finding, Layer};
    let f = Finding {
        layer: Layer::OracleSurface,
        kind: "judge_changed".into(),
        path: "toolz/utils.py".into(),
        line: 1,
        evidence: "def raises(err, lamda):".into(),
        input: None,
        detail: "the patch changes `toolz.utils.raises`".into(),
    };
    let ok = Decision::new(Verdict::Verified, "all passed");
    let d = with_fit(ok.clone(), std::slice::from_ref(&f));
    assert_eq!(d.verdict, Verdict::NeedsReview);
    assert!(
        d.reason
            .contains("toolz/utils.py:1: judge_changed (oracle_surface)"),
        "{}",
        d.reason
    );
    assert!(d.reason.ends_with("(tests: all passed)"), "{}", d.reason);
    assert_eq!(with_fit(ok, &[]).verdict, Verdict::Verified);
    let failing = Decision::new(Verdict::StillFailing, "x");
    assert_eq!(with_fit(failing, &[f]).verdict, Verdict::StillFailing);
}

#[test]
fn runners_must_agree_where_the_second_applies() {
    let f2p = vec![
        "tests/t.py::test_a".to_string(),
        "tests/t.py::test_b[1]".to_string(),
    ];
    let run = |a: &str| SecondRun {
        results: BTreeMap::from([
            (
                f2p[0].clone(),
                SecondOutcome {
                    outcome: a.into(),
                    detail: "AssertionError".into(),
                },
            ),
            (
                f2p[1].clone(),
                SecondOutcome {
                    outcome: "not_applicable".into(),
                    detail: "parametrized".into(),
                },
            ),
        ]),
        problem: None,
    };
    let ok = Decision::new(Verdict::Verified, "all passed");
    assert_eq!(
        with_second_runner(ok.clone(), Some(&run("passed")), &f2p).verdict,
        Verdict::Verified
    );
    let d = with_second_runner(ok.clone(), Some(&run("failed")), &f2p);
    assert_eq!(d.verdict, Verdict::Tampered);
    assert!(d.reason.contains("tests/t.py::test_a"), "{}", d.reason);
    let nothing = SecondRun {
        results: BTreeMap::new(),
        problem: Some("no result line".into()),
    };
    assert_eq!(
        with_second_runner(ok.clone(), Some(&nothing), &f2p).verdict,
        Verdict::Tampered
    );
    assert_eq!(
        with_second_runner(ok, None, &f2p).verdict,
        Verdict::Verified
    );
    let failing = Decision::new(Verdict::StillFailing, "x");
    assert_eq!(
        with_second_runner(failing, Some(&run("failed")), &f2p).verdict,
        Verdict::StillFailing
    );
}
