//! Candidate validation rules (pure): which test runs make a mutant a task.
//!
//! The original must pass (twice, identically); a mutant must make specific tests fail
//! (FAIL_TO_PASS) while the rest pass (PASS_TO_PASS), identically on two runs, without breaking
//! more than a quarter of the suite, and must not duplicate an accepted bug.

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;

/// One test's result in one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseOutcome {
    /// Passed or skipped: what "the suite is green" means to a user.
    pub ok: bool,
    /// Skipped (so `ok`): green, but not a pass the verifier can count for a FAIL_TO_PASS test.
    pub skipped: bool,
    pub message: Option<String>,
}

/// One run of the whole suite, keyed by pytest node id.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuiteResult {
    pub tests: BTreeMap<String, CaseOutcome>,
}

impl SuiteResult {
    pub fn failing(&self) -> BTreeSet<&str> {
        self.tests
            .iter()
            .filter(|(_, c)| !c.ok)
            .map(|(k, _)| k.as_str())
            .collect()
    }
}

/// The most of the suite a bug may break: broader bugs say little about repair skill.
pub const MAX_BROKEN_FRACTION: f64 = 0.25;

/// The original suite is not a usable baseline.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BaselineError {
    #[error("the test suite found no tests; check the test command and test directories")]
    NoTests,
    #[error(
        "the repository's suite fails before any mutation; these tests fail on the original code:\n{}\n  fix or deselect them (e.g. a test command with --deselect) and run again",
        list(.0)
    )]
    Failing(Vec<String>),
}

fn list(ids: &[String]) -> String {
    let mut s: Vec<String> = ids.iter().take(20).map(|i| format!("  - {i}")).collect();
    if ids.len() > 20 {
        s.push(format!("  - ... and {} more", ids.len() - 20));
    }
    s.join("\n")
}

/// The baseline: tests that pass on the original in both runs. Tests whose result differs
/// between the runs are flaky and left out of every task (reported, not fatal).
#[derive(Debug, Clone, PartialEq)]
pub struct Baseline {
    pub passing: BTreeSet<String>,
    pub flaky: BTreeSet<String>,
    /// Of `passing`, those skipped in a baseline run. A mutant may make one fail before it
    /// reaches its skip (humanize's i18n tests check English, then skip when the gitignored
    /// `.mo` catalogues are missing), but the gold patch only brings the skip back, and the
    /// verifier counts a skipped FAIL_TO_PASS test as still failing: never a target.
    pub skipped: BTreeSet<String>,
    /// Tests that fail on the original in both runs (the sandbox's environment, a test that
    /// needs a network or a tool): pre-existing, left out of every task like the flaky ones.
    pub failing: BTreeSet<String>,
}

/// Most of a suite may fail on the original before it is no baseline at all.
pub const MAX_FAILING_FRACTION: f64 = 0.5;

pub fn baseline(run1: &SuiteResult, run2: &SuiteResult) -> Result<Baseline, BaselineError> {
    if run1.tests.is_empty() {
        return Err(BaselineError::NoTests);
    }
    let f1 = run1.failing();
    let f2 = run2.failing();
    let both: Vec<String> = f1.intersection(&f2).map(|s| s.to_string()).collect();
    // A few tests failing on the original are pre-existing (as in a real repair); most of the
    // suite failing means the environment is wrong.
    if both.len() as f64 > run1.tests.len() as f64 * MAX_FAILING_FRACTION {
        return Err(BaselineError::Failing(both));
    }
    let failing: BTreeSet<String> = both.into_iter().collect();
    let mut flaky: BTreeSet<String> = f1
        .symmetric_difference(&f2)
        .map(|s| s.to_string())
        .collect();
    // A test present in only one run is flaky too (e.g. generated parametrisation).
    for k in run1.tests.keys() {
        if !run2.tests.contains_key(k) {
            flaky.insert(k.clone());
        }
    }
    for k in run2.tests.keys() {
        if !run1.tests.contains_key(k) {
            flaky.insert(k.clone());
        }
    }
    let passing: BTreeSet<String> = run1
        .tests
        .keys()
        .filter(|k| !flaky.contains(*k) && !failing.contains(*k))
        .cloned()
        .collect();
    let skipped = passing
        .iter()
        .filter(|k| [run1, run2].iter().any(|r| r.tests[*k].skipped))
        .cloned()
        .collect();
    Ok(Baseline {
        passing,
        flaky,
        skipped,
        failing,
    })
}

/// Why a candidate was not made a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Rejection {
    /// No test notices the change (equivalent or untested mutant).
    Survived,
    /// The two mutant runs disagree.
    Flaky,
    /// More than a quarter of the suite breaks.
    TooBroad,
    /// Same change, or same failing tests at the same line, as an accepted task.
    Duplicate,
    /// The suite did not finish (timeout, crash, no report).
    NoReport,
    /// Every possible report names the file, the line or the changed code.
    Leaky,
    /// The only tests it breaks are skipped on the original: the fix cannot make them pass.
    SkippedOnly,
}

impl Rejection {
    pub fn as_str(self) -> &'static str {
        match self {
            Rejection::Survived => "survived",
            Rejection::Flaky => "flaky",
            Rejection::TooBroad => "too_broad",
            Rejection::Duplicate => "duplicate",
            Rejection::NoReport => "no_report",
            Rejection::Leaky => "leaky",
            Rejection::SkippedOnly => "skipped_only",
        }
    }
}

/// The accepted split of the baseline's passing tests.
#[derive(Debug, Clone, PartialEq)]
pub struct Split {
    pub fail_to_pass: Vec<String>,
    pub pass_to_pass: Vec<String>,
}

/// Check a mutant's first run alone: cheap rejections before paying for the second run.
pub fn screen(base: &Baseline, run1: &SuiteResult) -> Result<(), Rejection> {
    let failing = failing_in(base, run1);
    if failing.is_empty() {
        return Err(Rejection::Survived);
    }
    if failing.len() as f64 > MAX_BROKEN_FRACTION * base.passing.len() as f64 {
        return Err(Rejection::TooBroad);
    }
    if failing.is_subset(&base.skipped) {
        return Err(Rejection::SkippedOnly);
    }
    Ok(())
}

/// Baseline-passing tests that do not pass in `run` (missing counts as failing: a module that
/// no longer imports takes its tests with it).
fn failing_in(base: &Baseline, run: &SuiteResult) -> BTreeSet<String> {
    base.passing
        .iter()
        .filter(|id| !run.tests.get(*id).is_some_and(|c| c.ok))
        .cloned()
        .collect()
}

/// Both mutant runs: the FAIL_TO_PASS / PASS_TO_PASS split, or why there is none.
pub fn classify(
    base: &Baseline,
    run1: &SuiteResult,
    run2: &SuiteResult,
) -> Result<Split, Rejection> {
    screen(base, run1)?;
    let f1 = failing_in(base, run1);
    let f2 = failing_in(base, run2);
    if f1 != f2 {
        return Err(Rejection::Flaky);
    }
    // A test skipped on the original that the mutant fails is in neither list: the gold patch
    // makes it skip again, which is no pass (FAIL_TO_PASS) and was never a pass (PASS_TO_PASS).
    Ok(Split {
        fail_to_pass: f1.difference(&base.skipped).cloned().collect(),
        pass_to_pass: base.passing.difference(&f1).cloned().collect(),
    })
}

/// Remembers accepted bugs to reject duplicates.
#[derive(Debug, Default)]
pub struct Dedup {
    mutants: BTreeSet<(String, String)>,
    behaviours: BTreeSet<(String, usize, Vec<String>)>,
}

impl Dedup {
    /// Whether a mutant (its file and full mutated text, its line and failing tests) repeats an
    /// accepted one; if not, it is recorded.
    pub fn check_and_insert(
        &mut self,
        file: &str,
        mutant_text: &str,
        line: usize,
        fail_to_pass: &[String],
    ) -> Result<(), Rejection> {
        let m = (file.to_string(), mutant_text.to_string());
        let b = (file.to_string(), line, fail_to_pass.to_vec());
        if self.mutants.contains(&m) || self.behaviours.contains(&b) {
            return Err(Rejection::Duplicate);
        }
        self.mutants.insert(m);
        self.behaviours.insert(b);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(cases: &[(&str, bool)]) -> SuiteResult {
        SuiteResult {
            tests: cases
                .iter()
                .map(|(k, ok)| {
                    (
                        k.to_string(),
                        CaseOutcome {
                            ok: *ok,
                            skipped: false,
                            message: (!ok).then(|| "assert 1 == 2".to_string()),
                        },
                    )
                })
                .collect(),
        }
    }

    fn base() -> Baseline {
        let r = run(&[
            ("t::a", true),
            ("t::b", true),
            ("t::c", true),
            ("t::d", true),
            ("t::e", true),
        ]);
        baseline(&r, &r).unwrap()
    }

    #[test]
    fn a_few_failures_are_pre_existing_most_are_no_baseline() {
        let few = run(&[("t::a", true), ("t::b", false), ("t::c", true)]);
        let b = baseline(&few, &few).unwrap();
        assert_eq!(b.failing, BTreeSet::from(["t::b".to_string()]));
        assert!(!b.passing.contains("t::b") && b.passing.contains("t::a"));
        let bad = run(&[("t::a", true), ("t::b", false), ("t::c", false)]);
        let err = baseline(&bad, &bad).unwrap_err();
        assert_eq!(
            err,
            BaselineError::Failing(vec!["t::b".into(), "t::c".into()])
        );
        assert!(err.to_string().contains("  - t::b"), "{err}");
        assert_eq!(baseline(&run(&[]), &run(&[])), Err(BaselineError::NoTests));
    }

    #[test]
    fn baseline_flaky_tests_are_left_out() {
        let r1 = run(&[("t::a", true), ("t::b", false), ("t::c", true)]);
        let r2 = run(&[("t::a", true), ("t::b", true), ("t::d", true)]);
        let b = baseline(&r1, &r2).unwrap();
        assert_eq!(
            b.flaky.iter().map(String::as_str).collect::<Vec<_>>(),
            vec!["t::b", "t::c", "t::d"]
        );
        assert_eq!(
            b.passing.iter().map(String::as_str).collect::<Vec<_>>(),
            vec!["t::a"]
        );
    }

    #[test]
    fn splits_fail_to_pass_and_pass_to_pass() {
        let m = run(&[
            ("t::a", false),
            ("t::b", true),
            ("t::c", true),
            ("t::d", true),
            ("t::e", true),
        ]);
        let s = classify(&base(), &m, &m).unwrap();
        assert_eq!(s.fail_to_pass, vec!["t::a"]);
        assert_eq!(s.pass_to_pass, vec!["t::b", "t::c", "t::d", "t::e"]);
    }

    #[test]
    fn rejects_survivors_broad_and_flaky_mutants() {
        let green = run(&[
            ("t::a", true),
            ("t::b", true),
            ("t::c", true),
            ("t::d", true),
            ("t::e", true),
        ]);
        assert_eq!(classify(&base(), &green, &green), Err(Rejection::Survived));
        // 2 of 5 = 40% > 25%
        let broad = run(&[
            ("t::a", false),
            ("t::b", false),
            ("t::c", true),
            ("t::d", true),
            ("t::e", true),
        ]);
        assert_eq!(screen(&base(), &broad), Err(Rejection::TooBroad));
        let one = run(&[
            ("t::a", false),
            ("t::b", true),
            ("t::c", true),
            ("t::d", true),
            ("t::e", true),
        ]);
        let other = run(&[
            ("t::a", true),
            ("t::b", false),
            ("t::c", true),
            ("t::d", true),
            ("t::e", true),
        ]);
        assert_eq!(classify(&base(), &one, &other), Err(Rejection::Flaky));
        // a test vanishing (its module no longer imports) counts as failing
        let vanished = run(&[
            ("t::b", true),
            ("t::c", true),
            ("t::d", true),
            ("t::e", true),
        ]);
        assert_eq!(
            classify(&base(), &vanished, &vanished)
                .unwrap()
                .fail_to_pass,
            vec!["t::a"]
        );
    }

    #[test]
    fn a_test_skipped_on_the_original_is_never_a_target() {
        // humanize's test_i18n asserts English output, then skips when the gitignored .mo
        // catalogues are missing: a mutant fails it before the skip, the gold patch brings the
        // skip back, and the verifier reports it still_failing.
        // Eight tests, the named ones failing.
        let failing = |bad: &[&str]| {
            let ids = [
                "t::a", "t::b", "t::c", "t::d", "t::e", "t::f", "t::g", "t::h",
            ];
            run(&ids.map(|id| (id, !bad.contains(&id))))
        };
        let mut original = failing(&[]);
        original.tests.get_mut("t::a").unwrap().skipped = true;
        let b = baseline(&original, &original).unwrap();
        assert_eq!(
            b.skipped.iter().map(String::as_str).collect::<Vec<_>>(),
            vec!["t::a"]
        );
        let only_skipped = failing(&["t::a"]);
        assert_eq!(screen(&b, &only_skipped), Err(Rejection::SkippedOnly));
        assert_eq!(
            classify(&b, &only_skipped, &only_skipped),
            Err(Rejection::SkippedOnly)
        );
        // with a real target beside it, the skipped test is in neither list
        let both = failing(&["t::a", "t::b"]);
        let s = classify(&b, &both, &both).unwrap();
        assert_eq!(s.fail_to_pass, vec!["t::b"]);
        assert_eq!(
            s.pass_to_pass,
            vec!["t::c", "t::d", "t::e", "t::f", "t::g", "t::h"]
        );
    }

    #[test]
    fn duplicates_by_text_or_behaviour() {
        let mut d = Dedup::default();
        let f2p = vec!["t::a".to_string()];
        assert_eq!(d.check_and_insert("x.py", "text1", 3, &f2p), Ok(()));
        assert_eq!(
            d.check_and_insert("x.py", "text1", 9, &[]),
            Err(Rejection::Duplicate)
        );
        assert_eq!(
            d.check_and_insert("x.py", "text2", 3, &f2p),
            Err(Rejection::Duplicate)
        );
        assert_eq!(d.check_and_insert("x.py", "text2", 4, &f2p), Ok(()));
        assert_eq!(d.check_and_insert("y.py", "text1", 3, &f2p), Ok(()));
    }
}
