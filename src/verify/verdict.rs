//! The decision, as a pure function of what the runs produced.
//!
//! Order matters and is part of the contract: policy, then setup errors, then the baseline
//! (unknown ids, reproduction), then tampering, then flips, then failures.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::junit::{CaseResult, TestOutcome};
use super::policy::Violation;
use crate::sandbox::ExecStatus;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    Verified,
    StillFailing,
    Regression,
    Flaky,
    Tampered,
    /// Tests passed, but the semantic analysis found capabilities the patch adds that a fix
    /// has no business adding (see `verify::scan`): a human must look. Never posted as a
    /// suggestion, exit code 1.
    NeedsReview,
    Policy,
    NotReproducible,
    Error,
}

impl Verdict {
    /// Every verdict, in order: what the action's `verdict` output and its docs list.
    pub const ALL: [Verdict; 9] = [
        Verdict::Verified,
        Verdict::StillFailing,
        Verdict::Regression,
        Verdict::Flaky,
        Verdict::Tampered,
        Verdict::NeedsReview,
        Verdict::Policy,
        Verdict::NotReproducible,
        Verdict::Error,
    ];

    pub fn as_str(&self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::StillFailing => "still_failing",
            Verdict::Regression => "regression",
            Verdict::Flaky => "flaky",
            Verdict::Tampered => "tampered",
            Verdict::NeedsReview => "needs_review",
            Verdict::Policy => "policy",
            Verdict::NotReproducible => "not_reproducible",
            Verdict::Error => "error",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    Before,
    After,
}

/// What the guard plugin said about one run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum GuardStatus {
    Clean,
    Tampered {
        findings: Vec<String>,
    },
    /// No (readable) guard report: the process died or something removed it.
    Missing,
    /// Rust and Node runs have no in-process guard (the JUnit harness, the workspace snapshot,
    /// the marker and the patch policy are their checks).
    NotApplicable,
}

/// One hardened test run.
/// Which tests a run selected. `FailToPass` runs (the focused plan's re-runs) say nothing
/// about other tests: those are judged on the `All` runs only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RunScope {
    #[default]
    All,
    FailToPass,
}

#[derive(Debug, Clone, Serialize)]
pub struct RunRecord {
    pub phase: Phase,
    pub index: usize,
    pub scope: RunScope,
    pub exit: ExecStatus,
    #[serde(serialize_with = "ser_ms")]
    pub duration: Duration,
    /// Per-test results keyed by node id; `None` when no JUnit report was produced.
    #[serde(skip)]
    pub results: Option<BTreeMap<String, CaseResult>>,
    /// Why the JUnit report is missing or unreadable.
    pub junit_problem: Option<String>,
    pub guard: GuardStatus,
    /// Tamper findings from outside the process (workspace changes, conftest hashes).
    pub external_findings: Vec<String>,
    /// Python: which pytest ran (`project 7.4.4`, or `harness 8.3.4: <why the project's did
    /// not>`), from the run's end-of-run marker.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pytest: Option<String>,
    /// The end of the run's output, for error reasons.
    #[serde(skip)]
    pub output_tail: String,
}

fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(d.as_millis() as u64)
}

impl RunRecord {
    pub fn outcome(&self, id: &str) -> TestOutcome {
        self.results
            .as_ref()
            .and_then(|r| r.get(id))
            .map_or(TestOutcome::Missing, |c| c.outcome)
    }

    fn exit_text(&self) -> String {
        match self.exit {
            ExecStatus::Exited(c) => format!("exit code {c}"),
            ExecStatus::TimedOut => "timed out".into(),
            ExecStatus::Oom => "killed: out of memory".into(),
            ExecStatus::QuotaExceeded => "workspace quota full".into(),
        }
    }
}

pub struct Inputs<'a> {
    pub violations: &'a [Violation],
    /// A failure before any test ran (patch does not apply, image missing, …).
    pub setup_error: Option<String>,
    pub fail_to_pass: &'a [String],
    /// Explicit pass-to-pass ids; empty means "every test that passed in all before runs".
    pub pass_to_pass: &'a [String],
    pub before: &'a [RunRecord],
    pub after: &'a [RunRecord],
}

#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Decision {
    pub verdict: Verdict,
    pub reason: String,
    pub flaky_ids: Vec<String>,
    pub still_failing: Vec<String>,
    pub regressions: Vec<String>,
    pub not_reproduced: Vec<String>,
    pub unknown_ids: Vec<String>,
    /// Failing (or flipping) before the patch, outside the fail-to-pass set: reported only.
    pub pre_existing_failures: Vec<String>,
    /// The pass-to-pass set actually enforced.
    pub pass_to_pass: Vec<String>,
}

impl Decision {
    fn new(verdict: Verdict, reason: impl Into<String>) -> Self {
        Decision {
            verdict,
            reason: reason.into(),
            flaky_ids: Vec::new(),
            still_failing: Vec::new(),
            regressions: Vec::new(),
            not_reproduced: Vec::new(),
            unknown_ids: Vec::new(),
            pre_existing_failures: Vec::new(),
            pass_to_pass: Vec::new(),
        }
    }
}

fn list(ids: &[String]) -> String {
    const SHOWN: usize = 10;
    let mut s = ids
        .iter()
        .take(SHOWN)
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join(", ");
    if ids.len() > SHOWN {
        s.push_str(&format!(" and {} more", ids.len() - SHOWN));
    }
    s
}

fn all_ids(runs: &[RunRecord]) -> BTreeSet<String> {
    runs.iter()
        .filter_map(|r| r.results.as_ref())
        .flat_map(|m| m.keys().cloned())
        .collect()
}

pub fn decide(inp: &Inputs) -> Decision {
    if let Some(v) = inp.violations.first() {
        let mut d = Decision::new(
            Verdict::Policy,
            format!(
                "patch policy rule `{}` rejected `{}`: {}",
                v.rule, v.path, v.detail
            ),
        );
        if inp.violations.len() > 1 {
            d.reason
                .push_str(&format!(" (and {} more)", inp.violations.len() - 1));
        }
        return d;
    }
    if let Some(e) = &inp.setup_error {
        return Decision::new(Verdict::Error, e.clone());
    }
    if inp.fail_to_pass.is_empty() {
        return Decision::new(
            Verdict::Error,
            "no fail-to-pass test ids: pass --fail-to-pass ID for the failing tests the patch must fix",
        );
    }
    if inp.before.is_empty() {
        return Decision::new(Verdict::Error, "no test runs were recorded");
    }

    // The baseline must be readable.
    if let Some(r) = inp.before.iter().find(|r| r.results.is_none()) {
        return Decision::new(
            Verdict::Error,
            format!(
                "the unpatched test run {} produced no usable JUnit report ({}; {}): {}",
                r.index + 1,
                r.exit_text(),
                r.junit_problem.as_deref().unwrap_or("no report"),
                r.output_tail.trim()
            ),
        );
    }
    let before_ids = all_ids(inp.before);
    let targets: Vec<&String> = inp
        .fail_to_pass
        .iter()
        .chain(inp.pass_to_pass.iter())
        .collect();
    let unknown: Vec<String> = targets
        .iter()
        .filter(|id| !before_ids.contains(id.as_str()))
        .map(|s| s.to_string())
        .collect();
    if !unknown.is_empty() {
        let mut d = Decision::new(
            Verdict::Error,
            format!(
                "unknown test ids (not in the unpatched run's report): {}",
                list(&unknown)
            ),
        );
        d.unknown_ids = unknown;
        return d;
    }

    // The failure must reproduce in every before run.
    let not_reproduced: Vec<String> = inp
        .fail_to_pass
        .iter()
        .filter(|id| {
            inp.before
                .iter()
                .any(|r| !matches!(r.outcome(id), TestOutcome::Failed | TestOutcome::Error))
        })
        .cloned()
        .collect();
    let f2p: BTreeSet<&String> = inp.fail_to_pass.iter().collect();
    // Runs that selected every test: the only evidence about tests other than fail-to-pass.
    let full_before: Vec<&RunRecord> = inp
        .before
        .iter()
        .filter(|r| r.scope == RunScope::All)
        .collect();
    let full_after: Vec<&RunRecord> = inp
        .after
        .iter()
        .filter(|r| r.scope == RunScope::All)
        .collect();
    let passed_all_before = |id: &str| {
        !full_before.is_empty()
            && full_before
                .iter()
                .all(|r| r.outcome(id) == TestOutcome::Passed)
    };
    let candidates: Vec<String> = if inp.pass_to_pass.is_empty() {
        before_ids.iter().cloned().collect()
    } else {
        inp.pass_to_pass.to_vec()
    };
    let mut pre_existing = Vec::new();
    let mut p2p = Vec::new();
    for id in candidates {
        if f2p.contains(&id) {
            continue;
        }
        if passed_all_before(&id) {
            p2p.push(id);
        } else if full_before
            .iter()
            .any(|r| matches!(r.outcome(&id), TestOutcome::Failed | TestOutcome::Error))
        {
            pre_existing.push(id);
        }
    }
    let finish = |mut d: Decision| {
        d.pre_existing_failures = pre_existing.clone();
        d.pass_to_pass = p2p.clone();
        d
    };
    if !not_reproduced.is_empty() {
        let mut d = Decision::new(
            Verdict::NotReproducible,
            format!(
                "the failure does not reproduce in all {} unpatched runs: {}",
                inp.before.len(),
                list(&not_reproduced)
            ),
        );
        d.not_reproduced = not_reproduced;
        return finish(d);
    }

    if inp.after.is_empty() {
        return finish(Decision::new(
            Verdict::Error,
            "no patched test runs were recorded",
        ));
    }

    // Tampering: the guard, external checks, or a "successful" run without reports.
    let mut findings = Vec::new();
    for r in inp.after {
        if let GuardStatus::Tampered { findings: f } = &r.guard {
            findings.extend(f.iter().map(|x| format!("run {}: {x}", r.index + 1)));
        }
        findings.extend(
            r.external_findings
                .iter()
                .map(|x| format!("run {}: {x}", r.index + 1)),
        );
        let silent = r.results.is_none() || r.guard == GuardStatus::Missing;
        if silent && r.exit == ExecStatus::Exited(0) {
            findings.push(format!(
                "run {}: the test process exited 0 but {} missing",
                r.index + 1,
                if r.results.is_none() {
                    "the JUnit report is"
                } else {
                    "the guard report is"
                }
            ));
        }
    }
    if !findings.is_empty() {
        return finish(Decision::new(
            Verdict::Tampered,
            format!(
                "the patched code interfered with the test harness: {}",
                findings.join("; ")
            ),
        ));
    }
    if let Some(r) = inp
        .after
        .iter()
        .find(|r| r.results.is_none() || r.guard == GuardStatus::Missing)
    {
        return finish(Decision::new(
            Verdict::Error,
            format!(
                "the patched test run {} produced no usable {} ({}): {}",
                r.index + 1,
                if r.results.is_none() {
                    "JUnit report"
                } else {
                    "guard report"
                },
                r.junit_problem.as_deref().unwrap_or(&r.exit_text()),
                r.output_tail.trim()
            ),
        ));
    }

    let enforced: Vec<&String> = inp.fail_to_pass.iter().chain(p2p.iter()).collect();
    let flaky: Vec<String> = enforced
        .iter()
        .filter(|id| {
            let outs: BTreeSet<TestOutcome> = if f2p.contains(*id) {
                inp.after.iter().map(|r| r.outcome(id)).collect()
            } else {
                full_after.iter().map(|r| r.outcome(id)).collect()
            };
            outs.len() > 1
        })
        .map(|s| s.to_string())
        .collect();
    if !flaky.is_empty() {
        let mut d = Decision::new(
            Verdict::Flaky,
            format!(
                "results changed between the {} patched runs for: {}",
                inp.after.len(),
                list(&flaky)
            ),
        );
        d.flaky_ids = flaky;
        return finish(d);
    }
    let still: Vec<String> = inp
        .fail_to_pass
        .iter()
        .filter(|id| {
            inp.after
                .iter()
                .any(|r| r.outcome(id) != TestOutcome::Passed)
        })
        .cloned()
        .collect();
    if !still.is_empty() {
        let first = &inp.after[0];
        let detail = first
            .results
            .as_ref()
            .and_then(|m| m.get(&still[0]))
            .and_then(|c| c.message.clone())
            .map(|m| format!(" (first: {})", m.lines().next().unwrap_or("")))
            .unwrap_or_default();
        let outcome = first.outcome(&still[0]).as_str();
        let mut d = Decision::new(
            Verdict::StillFailing,
            format!(
                "fail-to-pass tests are not passing after the patch: {} [{outcome}]{detail}",
                list(&still)
            ),
        );
        d.still_failing = still;
        return finish(d);
    }
    let regressions: Vec<String> = p2p
        .iter()
        .filter(|id| {
            full_after
                .iter()
                .any(|r| r.outcome(id) != TestOutcome::Passed)
        })
        .cloned()
        .collect();
    if !regressions.is_empty() {
        let mut d = Decision::new(
            Verdict::Regression,
            format!(
                "tests that passed before the patch no longer pass: {}",
                list(&regressions)
            ),
        );
        d.regressions = regressions;
        return finish(d);
    }
    let reason = if full_after.len() == inp.after.len() {
        format!(
            "{} fail-to-pass and {} pass-to-pass tests passed in all {} patched runs; the failure reproduced in all {} unpatched runs",
            inp.fail_to_pass.len(),
            p2p.len(),
            inp.after.len(),
            inp.before.len()
        )
    } else {
        format!(
            "{} fail-to-pass tests passed in all {} patched runs and {} pass-to-pass tests in the {} full run(s); the failure reproduced in all {} unpatched runs",
            inp.fail_to_pass.len(),
            inp.after.len(),
            p2p.len(),
            full_after.len(),
            inp.before.len()
        )
    };
    finish(Decision::new(Verdict::Verified, reason))
}

/// What the second runner (`images/harness/pl_second.py`) said about one fail-to-pass test.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SecondOutcome {
    /// `passed`, `failed` or `not_applicable`.
    pub outcome: String,
    #[serde(default)]
    pub detail: String,
}

/// The second runner's result: per-test outcomes, or why there are none.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SecondRun {
    pub results: BTreeMap<String, SecondOutcome>,
    pub problem: Option<String>,
}

/// The second-runner layer: a decision that lets the patch through (`verified`,
/// `needs_review`) becomes `tampered` when the harness's own runner saw a fail-to-pass test
/// fail (or reported nothing) where pytest saw it pass. `not_applicable` tests rest on pytest
/// alone and are named in the receipt.
pub fn with_second_runner(mut d: Decision, second: Option<&SecondRun>, f2p: &[String]) -> Decision {
    let Some(s) = second else { return d };
    if !matches!(d.verdict, Verdict::Verified | Verdict::NeedsReview) {
        return d;
    }
    let mut bad: Vec<String> = Vec::new();
    if let Some(p) = &s.problem {
        bad.push(p.clone());
    }
    for id in f2p {
        match s.results.get(id) {
            Some(o) if o.outcome == "passed" || o.outcome == "not_applicable" => {}
            Some(o) => bad.push(format!(
                "{id} passed under pytest but is `{}` under the harness's own runner ({})",
                o.outcome,
                o.detail.lines().last().unwrap_or("")
            )),
            None if s.problem.is_none() => {
                bad.push(format!("the second runner reported nothing for {id}"))
            }
            None => {}
        }
    }
    if !bad.is_empty() {
        d.verdict = Verdict::Tampered;
        d.reason = format!("the two runners disagree: {}", bad.join("; "));
    }
    d
}

/// The analysis layer: a `verified` decision with findings becomes `needs_review` (every other
/// verdict already rejects the patch and keeps its more specific reason).
pub fn with_analysis(mut d: Decision, findings: &[super::scan::Finding]) -> Decision {
    if d.verdict != Verdict::Verified || findings.is_empty() {
        return d;
    }
    const SHOWN: usize = 5;
    let mut shown: Vec<String> = findings.iter().take(SHOWN).map(|f| f.to_string()).collect();
    if findings.len() > SHOWN {
        shown.push(format!("and {} more", findings.len() - SHOWN));
    }
    d.verdict = Verdict::NeedsReview;
    d.reason = format!(
        "the tests pass, but the patch adds capabilities a fix has no business adding, so it needs a human review: {} (tests: {})",
        shown.join("; "),
        d.reason
    );
    d
}

/// The generalisation layers: a `verified` decision with a finding becomes `needs_review`,
/// with the evidence in the reason (every other verdict already rejects the patch).
pub fn with_fit(mut d: Decision, findings: &[super::evidence::Finding]) -> Decision {
    if d.verdict != Verdict::Verified || findings.is_empty() {
        return d;
    }
    const SHOWN: usize = 5;
    let mut shown: Vec<String> = findings.iter().take(SHOWN).map(|f| f.to_string()).collect();
    if findings.len() > SHOWN {
        shown.push(format!("and {} more", findings.len() - SHOWN));
    }
    d.verdict = Verdict::NeedsReview;
    d.reason = format!(
        "the tests pass, but the patch looks fitted to them rather than fixed, so it needs a human review: {} (tests: {})",
        shown.join("; "),
        d.reason
    );
    d
}

#[cfg(test)]
pub(crate) mod tests {
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
}
