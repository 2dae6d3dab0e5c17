//! What a run is checked against from outside its process: the collected reports and
//! snapshot, the end-of-run marker, the outcome stream.

use std::collections::{BTreeMap, BTreeSet};

use serde::Deserialize;

use crate::sandbox::output::tail_chars;
use crate::verify::junit;

#[derive(Deserialize)]
pub(super) struct Collected {
    pub(super) snapshot: BTreeMap<String, String>,
    /// pl_junit.py's result.json (Rust/Node runs) and its sha256 (`-` when missing).
    #[serde(default)]
    pub(super) result: Option<String>,
    #[serde(default)]
    pub(super) result_sha256: String,
    pub(super) junit: Option<String>,
    pub(super) guard: Option<String>,
    pub(super) junit_sha256: String,
    pub(super) guard_sha256: String,
}

/// The run script's last line: exit code and report fingerprints at the moment pytest returned.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Marker {
    pub(super) rc: i64,
    pub(super) junit: String,
    pub(super) guard: String,
    /// `project:7.4.4` / `harness:8.3.4` and, hex-encoded, why the project's was not used.
    pub(super) pytest: String,
    pub(super) why: String,
}

impl Marker {
    /// `project 7.4.4` or `harness 8.3.4: <why>`, for the run record.
    pub(super) fn pytest_note(&self) -> Option<String> {
        let (source, version) = self.pytest.split_once(':')?;
        let why = hex::decode(&self.why)
            .ok()
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .filter(|w| !w.is_empty());
        Some(match why {
            Some(w) => format!("{source} {version}: {w}"),
            None => format!("{source} {version}"),
        })
    }
}

pub(super) const MARKER: &str = "@@PATCHLOOP-RUN@@ ";

/// Exactly one marker line is expected; more means something else printed one.
pub(super) fn parse_marker(output: &str) -> Result<Option<Marker>, String> {
    let lines: Vec<&str> = output
        .lines()
        .filter_map(|l| l.find(MARKER).map(|i| &l[i + MARKER.len()..]))
        .collect();
    match lines.as_slice() {
        [] => Ok(None),
        [one] => {
            let mut m = Marker {
                rc: -1,
                junit: String::new(),
                guard: String::new(),
                pytest: String::new(),
                why: String::new(),
            };
            for kv in one.split_whitespace() {
                match kv.split_once('=') {
                    Some(("rc", v)) => m.rc = v.parse().unwrap_or(-1),
                    Some(("junit", v)) => m.junit = v.to_string(),
                    Some(("guard", v)) => m.guard = v.to_string(),
                    Some(("pytest", v)) => m.pytest = v.to_string(),
                    Some(("why", v)) => m.why = v.to_string(),
                    _ => {}
                }
            }
            Ok(Some(m))
        }
        more => Err(format!(
            "{} harness end-of-run markers in the output (the code under test printed fakes)",
            more.len()
        )),
    }
}

#[derive(Deserialize)]
pub(super) struct GuardReport {
    pub(super) status: String,
    #[serde(default)]
    pub(super) findings: Vec<String>,
    #[serde(default)]
    pub(super) outcomes: BTreeMap<String, String>,
    #[serde(default)]
    pub(super) conftests: BTreeMap<String, String>,
}

const STREAM_MARKER: &str = "@@PATCHLOOP-T@@ ";

/// The outcome channel of one run: per-test records the guard wrote to the harness's private
/// stdout copy as each report happened.
#[derive(Debug, Default)]
pub(super) struct Stream {
    /// Node id -> worst outcome (the guard's merge rule: a passing setup/teardown says
    /// nothing, a failing one is an error).
    pub(super) outcomes: BTreeMap<String, junit::TestOutcome>,
    pub(super) problems: Vec<String>,
}

pub(super) fn parse_stream(output: &str, nonce: &str) -> Stream {
    use junit::TestOutcome;
    let prefix = format!("{STREAM_MARKER}{nonce} ");
    let mut s = Stream::default();
    let mut marker_seen = false;
    for line in output.lines() {
        if line.contains(MARKER) {
            marker_seen = true;
        }
        let Some(i) = line.find(&prefix) else {
            continue;
        };
        if marker_seen {
            s.problems
                .push("an outcome record arrived after the end-of-run marker".into());
            continue;
        }
        let rest = &line[i + prefix.len()..];
        let mut parts = rest.splitn(3, ' ');
        let (when, outcome, id) = (parts.next(), parts.next(), parts.next());
        let id: Option<String> = id.and_then(|j| serde_json::from_str(j).ok());
        let (Some(when), Some(outcome), Some(id)) = (when, outcome, id) else {
            s.problems.push(format!(
                "an unreadable outcome record: {}",
                tail_chars(rest, 200)
            ));
            continue;
        };
        let o = match (outcome, when) {
            ("passed", "call") => TestOutcome::Passed,
            ("passed", _) => continue,
            ("skipped", _) => TestOutcome::Skipped,
            ("failed", "call") => TestOutcome::Failed,
            ("failed", _) => TestOutcome::Error,
            _ => {
                s.problems.push(format!(
                    "an unreadable outcome record: {}",
                    tail_chars(rest, 200)
                ));
                continue;
            }
        };
        let e = s.outcomes.entry(id).or_insert(o);
        if o > *e {
            *e = o;
        }
    }
    s
}

/// Every test JUnit calls passed must have streamed `passed` and nothing worse; any streamed
/// outcome must match JUnit's.
pub(super) fn stream_vs_junit(
    stream: &Stream,
    named: &BTreeMap<String, junit::CaseResult>,
) -> Vec<String> {
    use junit::TestOutcome;
    let mut out = Vec::new();
    for (id, case) in named {
        match stream.outcomes.get(id) {
            Some(o) if *o == case.outcome => {}
            None if case.outcome != TestOutcome::Passed => {}
            got => out.push(format!(
                "the JUnit report says {id} {} but the outcome stream says {}",
                case.outcome.as_str(),
                got.map_or("nothing", |o| o.as_str())
            )),
        }
    }
    out
}

/// Files that appeared, vanished or changed in the workspace during a run.
pub(super) fn tree_changes(
    before: &BTreeMap<String, String>,
    after: &BTreeMap<String, String>,
) -> Vec<String> {
    let mut out = Vec::new();
    let keys: BTreeSet<&String> = before.keys().chain(after.keys()).collect();
    for k in keys {
        match (before.get(k), after.get(k)) {
            (Some(a), Some(b)) if a != b => out.push(format!("the run modified {k}")),
            (None, Some(_)) => out.push(format!("the run created {k}")),
            (Some(_), None) => out.push(format!("the run deleted {k}")),
            _ => {}
        }
    }
    out
}
