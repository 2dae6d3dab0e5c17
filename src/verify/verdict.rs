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
    /// Explicit pass-to-pass ids the unpatched run did not collect: not enforced.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_collected: Vec<String>,
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
            not_collected: Vec::new(),
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
    let mut d = decide_runs(inp);
    // A pass-to-pass id the unpatched harness run did not collect (a linter plugin's item that
    // only the project's own command enables) cannot be checked on either side: named in the
    // receipt, not enforced (an explicit id neither passing nor failing before counts for
    // nothing). The unpatched tree decides it, so a patch cannot make one.
    if d.unknown_ids.is_empty() && inp.before.iter().all(|r| r.results.is_some()) {
        let before_ids = all_ids(inp.before);
        d.not_collected = inp
            .pass_to_pass
            .iter()
            .filter(|id| !before_ids.contains(id.as_str()))
            .cloned()
            .collect();
    }
    d
}

fn decide_runs(inp: &Inputs) -> Decision {
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
    let unknown: Vec<String> = inp
        .fail_to_pass
        .iter()
        .filter(|id| !before_ids.contains(id.as_str()))
        .cloned()
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
#[path = "verdict_tests.rs"]
pub(crate) mod tests;
