//! JUnit XML to per-test outcomes keyed by pytest node id.
//!
//! pytest writes `classname="tests.test_x.TestC" name="test_y[p]"`; the node id is
//! `tests/test_x.py::TestC::test_y[p]`. The dotted classname cannot be split into directories,
//! module and classes without knowing the files, so lookups go the other way: a node id maps to
//! exactly one key ([`key_for_node_id`]), and unknown keys are named by a heuristic.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::time::Duration;

use quick_junit::{NonSuccessKind, Report, TestCaseStatus};
use serde::{Deserialize, Serialize};

/// One test's outcome in one run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TestOutcome {
    Passed,
    Skipped,
    Failed,
    Error,
    /// Not in the report at all.
    Missing,
}

impl TestOutcome {
    pub fn as_str(&self) -> &'static str {
        match self {
            TestOutcome::Passed => "passed",
            TestOutcome::Skipped => "skipped",
            TestOutcome::Failed => "failed",
            TestOutcome::Error => "error",
            TestOutcome::Missing => "missing",
        }
    }

    /// When pytest reports a test twice (a failed call and a teardown error), the worse wins.
    fn severity(&self) -> u8 {
        match self {
            TestOutcome::Passed => 0,
            TestOutcome::Skipped => 1,
            TestOutcome::Failed => 2,
            TestOutcome::Error => 3,
            TestOutcome::Missing => 4,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CaseResult {
    pub outcome: TestOutcome,
    pub duration: Option<Duration>,
    /// The failure/error/skip message, trimmed.
    pub message: Option<String>,
}

/// All test cases of one report, keyed by `classname::name`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct JunitRun {
    pub cases: BTreeMap<String, CaseResult>,
}

#[derive(Debug, thiserror::Error)]
pub enum JunitError {
    #[error("the JUnit XML report cannot be parsed: {0}")]
    Parse(String),
}

/// The lookup key of a testcase element.
pub fn key(classname: &str, name: &str) -> String {
    crate::testid::junit_key(classname, name)
}

/// The id's parts: file, classes, name with parameters ([`crate::testid::parts`]).
pub fn split_node_id(node_id: &str) -> Vec<&str> {
    crate::testid::parts(node_id)
}

/// The key a pytest node id has in pytest's JUnit output.
pub fn key_for_node_id(node_id: &str) -> String {
    crate::testid::TestId::new(node_id).junit_key()
}

/// Best-effort node id for a key whose file is unknown
/// ([`crate::testid::TestId::from_junit_key`]).
pub fn node_id_for_key(k: &str) -> String {
    crate::testid::TestId::from_junit_key(k)
        .as_str()
        .to_string()
}

pub fn parse(xml: &str) -> Result<JunitRun, JunitError> {
    let mut cases: BTreeMap<String, CaseResult> = BTreeMap::new();
    for c in raw_cases(xml)? {
        merge(&mut cases, key(&c.classname, &c.name), c.result);
    }
    Ok(JunitRun { cases })
}

/// One `<testcase>` as written, with its suite's name.
#[derive(Debug, Clone, PartialEq)]
pub struct RawCase {
    pub suite: String,
    pub classname: String,
    pub name: String,
    pub result: CaseResult,
    /// The case's `<system-out>` (nextest stores each test process's stdout).
    pub stdout: Option<String>,
}

/// Every testcase of a report in document order: the one reader of JUnit XML (pytest, nextest,
/// libtest and jest-junit reports all go through it).
pub fn raw_cases(xml: &str) -> Result<Vec<RawCase>, JunitError> {
    let xml = strip_timestamps(&one_status_per_case(xml));
    let report =
        Report::deserialize_from_str(&xml).map_err(|e| JunitError::Parse(e.to_string()))?;
    let mut out = Vec::new();
    for suite in &report.test_suites {
        for case in &suite.test_cases {
            let classname = case.classname.as_ref().map(|c| c.as_str()).unwrap_or("");
            let (outcome, message) = match &case.status {
                TestCaseStatus::Success { .. } => (TestOutcome::Passed, None),
                TestCaseStatus::NonSuccess { kind, message, .. } => (
                    match kind {
                        NonSuccessKind::Failure => TestOutcome::Failed,
                        NonSuccessKind::Error => TestOutcome::Error,
                    },
                    message.as_ref().map(|m| m.as_str().to_string()),
                ),
                TestCaseStatus::Skipped { message, .. } => (
                    TestOutcome::Skipped,
                    message.as_ref().map(|m| m.as_str().to_string()),
                ),
            };
            out.push(RawCase {
                suite: suite.name.as_str().to_string(),
                classname: classname.to_string(),
                name: case.name.as_str().to_string(),
                stdout: case.system_out.as_ref().map(|s| s.as_str().to_string()),
                result: CaseResult {
                    outcome,
                    duration: case.time,
                    message,
                },
            });
        }
    }
    Ok(out)
}

/// Messages kept in a run's results (and so in receipts) are clipped to this many chars.
const MESSAGE_CHARS: usize = 500;

/// Adds a result under `k`; a test reported twice (pytest's failed call plus teardown error)
/// keeps the worse outcome and the summed duration. The message is clipped here, the
/// receipts' one entry point.
pub fn merge(cases: &mut BTreeMap<String, CaseResult>, k: String, new: CaseResult) {
    let new = CaseResult {
        message: new.message.map(|m| m.chars().take(MESSAGE_CHARS).collect()),
        ..new
    };
    match cases.get_mut(&k) {
        Some(old) => {
            if new.outcome.severity() > old.outcome.severity() {
                old.outcome = new.outcome;
                old.message = new.message;
            }
            if let (Some(a), Some(b)) = (old.duration, new.duration) {
                old.duration = Some(a + b);
            }
        }
        None => {
            cases.insert(k, new);
        }
    }
}

/// pytest writes two `<skipped>` into one `<testcase>` for a module skipped at collection (a
/// module-level `pytest.importorskip` of an optional dependency, pytest 9), and a `<failure>`
/// beside an `<error>` for a test that fails and then errors in its teardown. quick-junit
/// rejects a case with more than one status element, and the whole report would be lost; this
/// keeps one per case: an error, else a failure, else the first skip.
fn one_status_per_case(xml: &str) -> Cow<'_, str> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let status = |name: &[u8]| match name {
        b"error" => Some(2u8),
        b"failure" => Some(1),
        b"skipped" => Some(0),
        _ => None,
    };
    let mut depth = 0usize;
    // The open `<testcase>`'s depth, its status elements (byte span, rank), an open one.
    let mut case: Option<usize> = None;
    let mut found: Vec<(usize, usize, u8)> = Vec::new();
    let mut open: Option<(usize, u8)> = None;
    let mut drop: Vec<(usize, usize)> = Vec::new();
    loop {
        let at = reader.buffer_position() as usize;
        let event = match reader.read_event() {
            Ok(e) => e,
            // Not well-formed: the parser proper says so.
            Err(_) => return Cow::Borrowed(xml),
        };
        let end = reader.buffer_position() as usize;
        match event {
            Event::Start(e) => {
                depth += 1;
                if e.name().as_ref() == b"testcase" {
                    case = Some(depth);
                    found.clear();
                } else if case == Some(depth - 1) {
                    open = status(e.name().as_ref()).map(|f| (at, f));
                }
            }
            Event::Empty(e) => {
                if case == Some(depth)
                    && let Some(f) = status(e.name().as_ref())
                {
                    found.push((at, end, f));
                }
            }
            Event::End(e) => {
                if case == Some(depth - 1)
                    && let Some((start, f)) = open.take()
                {
                    found.push((start, end, f));
                }
                if case == Some(depth) && e.name().as_ref() == b"testcase" {
                    if found.len() > 1 {
                        // The worst, as [`merge`] ranks a case reported twice.
                        let worst = found.iter().map(|s| s.2).max().unwrap_or(0);
                        let keep = found.iter().position(|s| s.2 == worst).unwrap_or(0);
                        for (i, s) in found.iter().enumerate() {
                            if i != keep {
                                drop.push((s.0, s.1));
                            }
                        }
                    }
                    case = None;
                }
                depth = depth.saturating_sub(1);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if drop.is_empty() {
        return Cow::Borrowed(xml);
    }
    let mut out = String::with_capacity(xml.len());
    let mut from = 0;
    for (a, b) in drop {
        out.push_str(&xml[from..a]);
        from = b;
    }
    out.push_str(&xml[from..]);
    Cow::Owned(out)
}

/// pytest writes `timestamp="2026-11-29T13:48:27.172173"` (no zone), which quick-junit rejects;
/// the verdict never needs it.
pub fn strip_timestamps(xml: &str) -> String {
    const ATTR: &str = " timestamp=\"";
    let mut out = String::with_capacity(xml.len());
    let mut rest = xml;
    while let Some(i) = rest.find(ATTR) {
        out.push_str(&rest[..i]);
        let after = &rest[i + ATTR.len()..];
        match after.find('"') {
            Some(j) => rest = &after[j + 1..],
            None => {
                rest = after;
                break;
            }
        }
    }
    out.push_str(rest);
    out
}

impl JunitRun {
    pub fn outcome(&self, node_id: &str) -> TestOutcome {
        self.get(node_id)
            .map_or(TestOutcome::Missing, |c| c.outcome)
    }

    pub fn get(&self, node_id: &str) -> Option<&CaseResult> {
        self.cases.get(&key_for_node_id(node_id))
    }

    /// Node ids of every case, named through `known` (key -> node id) where possible.
    pub fn node_ids(&self, known: &BTreeMap<String, String>) -> BTreeMap<String, CaseResult> {
        self.cases
            .iter()
            .map(|(k, v)| {
                let id = known.get(k).cloned().unwrap_or_else(|| node_id_for_key(k));
                (id, v.clone())
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> JunitRun {
        parse(include_str!("testdata/pytest_junit.xml")).unwrap()
    }

    #[test]
    fn outcomes_from_real_pytest_output() {
        let r = sample();
        assert_eq!(r.outcome("tests/test_a.py::test_ok"), TestOutcome::Passed);
        assert_eq!(r.outcome("tests/test_a.py::test_bad"), TestOutcome::Failed);
        assert_eq!(
            r.outcome("tests/test_a.py::test_skip"),
            TestOutcome::Skipped
        );
        assert_eq!(r.outcome("tests/test_a.py::test_xf"), TestOutcome::Skipped);
        assert_eq!(
            r.outcome("tests/test_a.py::TestC::test_p[a.b]"),
            TestOutcome::Passed
        );
        // Failed call plus teardown error: reported twice, the worse wins.
        assert_eq!(r.outcome("tests/test_a.py::test_td"), TestOutcome::Error);
        // Collection error of a whole module.
        assert_eq!(r.outcome("tests/test_b.py"), TestOutcome::Error);
        assert_eq!(
            r.outcome("tests/test_a.py::test_nope"),
            TestOutcome::Missing
        );
        assert_eq!(
            r.get("tests/test_a.py::test_bad")
                .unwrap()
                .message
                .as_deref(),
            Some("assert 1 == 2")
        );
    }

    #[test]
    fn a_case_with_several_status_elements_keeps_the_worst() {
        // pytest 9.2's report of a module skipped at collection (`importorskip` at its top),
        // and a case that failed and then errored in teardown, beside an ordinary one.
        let xml = r#"<?xml version="1.0" encoding="utf-8"?><testsuites name="pytest tests"><testsuite name="pytest" errors="1" failures="1" skipped="2" tests="3" time="0.1" timestamp="2026-12-05T17:59:50.247723+00:00" hostname="h"><testcase classname="" name="tests.test_issue30" time="0.000"><skipped message="collection skipped">('/w/tests/test_issue30.py', 8, "Skipped: could not import 'twisted'")</skipped><skipped message="collection skipped">('/w/tests/test_issue30.py', 8, "Skipped: could not import 'twisted'")</skipped></testcase><testcase classname="tests.test_a" name="test_td" time="0.001"><failure message="assert 1 == 2">x</failure><system-out>out</system-out><error message="failed on teardown with &quot;RuntimeError&quot;">y</error></testcase><testcase classname="tests.test_a" name="test_ok" time="0.001"><skipped type="pytest.skip" message="later" /></testcase></testsuite></testsuites>"#;
        let cases = raw_cases(xml).unwrap();
        let got: Vec<(&str, TestOutcome)> = cases
            .iter()
            .map(|c| (c.name.as_str(), c.result.outcome))
            .collect();
        assert_eq!(
            got,
            [
                ("tests.test_issue30", TestOutcome::Skipped),
                ("test_td", TestOutcome::Error),
                ("test_ok", TestOutcome::Skipped),
            ]
        );
        assert_eq!(cases[1].stdout.as_deref(), Some("out"));
        // A report with one status per case is passed through as it is.
        assert!(matches!(one_status_per_case(&xml[..0]), Cow::Borrowed(_)));
        let plain = include_str!("testdata/pytest_junit.xml");
        assert!(matches!(one_status_per_case(plain), Cow::Borrowed(_)));
    }

    #[test]
    fn keys_and_node_ids_round_trip() {
        for id in [
            "tests/test_a.py::test_ok",
            "tests/unit/test_a.py::TestC::TestD::test_p[x.y-1]",
            "test_top.py::test_z",
            "tests/test_u.py::test_x[https://[::1]:80/]",
            "tests/t.py::TestC::test_y[a::b]",
            "tests/t.py::TestC::TestD::test_y[::]",
            "tests/t.py::test_z[[::]-x::y]",
        ] {
            assert_eq!(node_id_for_key(&key_for_node_id(id)), id);
        }
        assert_eq!(node_id_for_key("::tests.test_b"), "tests/test_b.py");
        // The keys are exactly what pytest writes as classname / name.
        assert_eq!(
            key_for_node_id("tests/test_u.py::test_x[https://[::1]:80/]"),
            "tests.test_u::test_x[https://[::1]:80/]"
        );
        assert_eq!(
            key_for_node_id("tests/t.py::TestC::test_y[a::b]"),
            "tests.t.TestC::test_y[a::b]"
        );
        assert_eq!(
            split_node_id("tests/t.py::TestC::test_y[a::b]"),
            ["tests/t.py", "TestC", "test_y[a::b]"]
        );
        let known = BTreeMap::from([(
            key_for_node_id("Weird/test_a.py::test_ok"),
            "Weird/test_a.py::test_ok".to_string(),
        )]);
        let r = JunitRun {
            cases: BTreeMap::from([(
                key_for_node_id("Weird/test_a.py::test_ok"),
                CaseResult {
                    outcome: TestOutcome::Passed,
                    duration: None,
                    message: None,
                },
            )]),
        };
        assert!(r.node_ids(&known).contains_key("Weird/test_a.py::test_ok"));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(parse("<testsuites><testsuite").is_err());
        assert!(parse("not xml").is_err());
    }
}
