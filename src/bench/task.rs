//! The task format: SWE-bench-compatible JSONL plus patchloop's own fields.
//!
//! SWE-bench's fields keep their names and meaning (`patch` is the gold fix, applied to the
//! buggy tree; `FAIL_TO_PASS`/`PASS_TO_PASS` are pytest node ids). Our generated bugs live in
//! `bug_patch`: the buggy tree is the snapshot at `base_commit` with `bug_patch` applied. A real
//! bug mined from a library's history is stored the same way: the snapshot is the release that
//! fixed it, `bug_patch` reverts the fix's code hunks and `patch` is the fix (`origin: real`).

use crate::testcmd::TestCommand;
use std::collections::BTreeSet;
use std::path::Path;

use serde::{Deserialize, Deserializer, Serialize};

/// One benchmark task, one JSON object per line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// `owner__name-<id>`, unique within a tasks file.
    pub instance_id: String,
    /// `owner/name`.
    pub repo: String,
    /// The snapshot the task starts from (see [`Task::snapshot_name`]).
    pub base_commit: String,
    /// The gold fix (unified diff, applied to the buggy tree).
    pub patch: String,
    /// Test changes applied before evaluation (empty for injected bugs: the tests exist).
    #[serde(default)]
    pub test_patch: String,
    /// The bug report the agent sees.
    pub problem_statement: String,
    #[serde(rename = "FAIL_TO_PASS", deserialize_with = "list_or_json_string")]
    pub fail_to_pass: Vec<String>,
    #[serde(rename = "PASS_TO_PASS", deserialize_with = "list_or_json_string")]
    pub pass_to_pass: Vec<String>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub version: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub created_at: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hints_text: String,
    // ---- patchloop fields ----
    /// The bug (unified diff against the snapshot): an injected mutation, or a mined fix
    /// reverted; empty for SWE-bench rows, whose snapshot is the buggy commit itself.
    #[serde(default)]
    pub bug_patch: String,
    /// The command that runs the suite, as the repository's CI writes it (stored as text,
    /// parsed when the file is read).
    #[serde(
        default = "TestCommand::python_pytest",
        with = "crate::testcmd::as_written"
    )]
    pub test_command: TestCommand,
    /// Test files withheld from the agent's workspace and restored for verification.
    #[serde(default)]
    pub hidden_test_files: Vec<String>,
    /// Which mutation made the bug (for per-operator statistics), if generated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mutation_operator: Option<String>,
    /// Which bench the task belongs to; absent in older files (see [`Task::origin`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<Origin>,
    /// Where a real bug came from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provenance: Option<Provenance>,
}

/// A task's bench: results are reported per bench, since an injected one-token bug says little
/// about a fix mined from a library's history.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// A syntax-tree mutation of working code (`patchloop bench gen`).
    Mutation,
    /// A bug fixed in a library's release history, with the tests that came with the fix.
    Real,
}

impl Origin {
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::Mutation => "mutation",
            Origin::Real => "real",
        }
    }
}

/// The release history a real bug was mined from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Provenance {
    /// The PyPI distribution, e.g. `boltons`.
    pub library: String,
    /// The last release with the bug.
    pub buggy_release: String,
    /// The release that fixed it: the task's snapshot.
    pub fixed_release: String,
    /// The changelog entry of the fix (or, where the changelog is silent, what the diff does).
    pub changelog: String,
    /// Lines the fix adds plus lines it removes.
    pub changed_lines: usize,
}

pub fn default_test_command() -> TestCommand {
    TestCommand::python_pytest()
}

/// SWE-bench's published datasets store the test lists as JSON-encoded strings; newer
/// tooling writes plain arrays. Accept both.
fn list_or_json_string<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Either {
        List(Vec<String>),
        Encoded(String),
    }
    match Either::deserialize(d)? {
        Either::List(v) => Ok(v),
        Either::Encoded(s) => serde_json::from_str(&s).map_err(|e| {
            serde::de::Error::custom(format!("a JSON-encoded list of test ids was expected: {e}"))
        }),
    }
}

impl Task {
    /// The explicit `origin`, else what the fields say: a mutation operator means an injected
    /// bug, anything else (SWE-bench rows, real bugs) a real one.
    pub fn origin(&self) -> Origin {
        self.origin.unwrap_or(if self.mutation_operator.is_some() {
            Origin::Mutation
        } else {
            Origin::Real
        })
    }

    /// `owner+name-<first 12 of base_commit>`: the snapshot (a `.tar.gz` or a directory) in the
    /// sources directory that this task starts from.
    pub fn snapshot_name(&self) -> String {
        let short: String = self.base_commit.chars().take(12).collect();
        format!("{}-{short}", self.repo.replace('/', "+"))
    }
}

/// A tasks file with bad lines: every bad line is named, so one pass fixes them all.
#[derive(Debug, thiserror::Error)]
pub enum TasksError {
    #[error("cannot read the tasks file {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} has {} bad line(s):\n{}\n  each line must be one JSON task object (SWE-bench fields plus patchloop's)", .bad.len(), render_bad(.bad))]
    BadLines { path: String, bad: Vec<BadLine> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct BadLine {
    /// 1-based.
    pub line: usize,
    pub reason: String,
}

fn render_bad(bad: &[BadLine]) -> String {
    bad.iter()
        .map(|b| format!("  line {}: {}", b.line, b.reason))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Parse JSONL text. Blank lines are skipped; every malformed line, missing field and
/// duplicate `instance_id` is reported with its line number.
pub fn parse_tasks(path: &str, text: &str) -> Result<Vec<Task>, TasksError> {
    let mut tasks = Vec::new();
    let mut bad = Vec::new();
    let mut seen = BTreeSet::new();
    for (i, line) in text.lines().enumerate() {
        let line_no = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Task>(line) {
            Ok(t) => {
                if let Some(reason) = invalid(&t) {
                    bad.push(BadLine {
                        line: line_no,
                        reason,
                    });
                } else if !seen.insert(t.instance_id.clone()) {
                    bad.push(BadLine {
                        line: line_no,
                        reason: format!("duplicate instance_id {:?}", t.instance_id),
                    });
                } else {
                    tasks.push(t);
                }
            }
            Err(e) => bad.push(BadLine {
                line: line_no,
                reason: e.to_string(),
            }),
        }
    }
    if bad.is_empty() {
        Ok(tasks)
    } else {
        Err(TasksError::BadLines {
            path: path.to_string(),
            bad,
        })
    }
}

fn invalid(t: &Task) -> Option<String> {
    if t.instance_id.trim().is_empty() {
        return Some("empty instance_id".into());
    }
    if !t.repo.contains('/') {
        return Some(format!("repo {:?} is not owner/name", t.repo));
    }
    if t.base_commit.len() < 12 || !t.base_commit.chars().all(|c| c.is_ascii_hexdigit()) {
        return Some(format!(
            "base_commit {:?} is not a hex commit id",
            t.base_commit
        ));
    }
    if t.fail_to_pass.is_empty() {
        return Some("FAIL_TO_PASS is empty: a task needs a failing test".into());
    }
    None
}

pub fn read_tasks(path: &Path) -> Result<Vec<Task>, TasksError> {
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(path).map_err(|source| TasksError::Io {
        path: shown.clone(),
        source,
    })?;
    parse_tasks(&shown, &text)
}

/// One JSON line per task, in the given order.
pub fn to_jsonl(tasks: &[Task]) -> Result<String, serde_json::Error> {
    let mut out = String::new();
    for t in tasks {
        out.push_str(&serde_json::to_string(t)?);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn sample() -> Task {
        Task {
            instance_id: "o__n-flipcmp-0123456789".into(),
            repo: "o/n".into(),
            base_commit: "0123456789abcdef0123456789abcdef01234567".into(),
            patch: "--- a/x.py\n+++ b/x.py\n".into(),
            test_patch: String::new(),
            problem_statement: "tests fail".into(),
            fail_to_pass: vec!["tests/test_x.py::test_a".into()],
            pass_to_pass: vec!["tests/test_x.py::test_b".into()],
            version: String::new(),
            created_at: String::new(),
            hints_text: String::new(),
            bug_patch: "--- a/x.py\n+++ b/x.py\n".into(),
            test_command: default_test_command(),
            hidden_test_files: vec![],
            mutation_operator: Some("flipcmp".into()),
            origin: None,
            provenance: None,
        }
    }

    #[test]
    fn round_trips_with_swe_bench_field_names() {
        let t = sample();
        let line = serde_json::to_string(&t).unwrap();
        for field in [
            "\"instance_id\"",
            "\"repo\"",
            "\"base_commit\"",
            "\"patch\"",
            "\"test_patch\"",
            "\"problem_statement\"",
            "\"FAIL_TO_PASS\"",
            "\"PASS_TO_PASS\"",
            "\"bug_patch\"",
            "\"test_command\"",
            "\"hidden_test_files\"",
        ] {
            assert!(line.contains(field), "{field} missing in {line}");
        }
        let back = parse_tasks(
            "t.jsonl",
            &to_jsonl(&[t.clone(), {
                let mut u = t.clone();
                u.instance_id.push('2');
                u
            }])
            .unwrap(),
        )
        .unwrap();
        assert_eq!(back[0], t);
        assert_eq!(back.len(), 2);
        assert_eq!(t.snapshot_name(), "o+n-0123456789ab");
    }

    #[test]
    fn accepts_swe_bench_encoded_lists_and_defaults() {
        // A SWE-bench dataset row: lists as JSON strings, none of our fields.
        let line = r#"{"instance_id":"a__b-1","repo":"a/b","base_commit":"abcdefabcdef12","patch":"p","test_patch":"tp","problem_statement":"s","FAIL_TO_PASS":"[\"t.py::x\"]","PASS_TO_PASS":"[]","version":"1.0"}"#;
        let tasks = parse_tasks("swe.jsonl", line).unwrap();
        assert_eq!(tasks[0].fail_to_pass, vec!["t.py::x"]);
        assert!(tasks[0].pass_to_pass.is_empty());
        assert_eq!(tasks[0].test_command.as_str(), "python -m pytest");
        assert_eq!(tasks[0].bug_patch, "");
        assert_eq!(
            tasks[0].origin(),
            Origin::Real,
            "a SWE-bench row is a real bug"
        );
    }

    #[test]
    fn origin_is_explicit_or_derived() {
        let mut t = sample();
        assert_eq!(
            t.origin(),
            Origin::Mutation,
            "older tasks: the operator says so"
        );
        assert!(!serde_json::to_string(&t).unwrap().contains("origin"));
        t.mutation_operator = None;
        t.origin = Some(Origin::Mutation);
        assert_eq!(t.origin(), Origin::Mutation, "explicit wins");
        t.origin = Some(Origin::Real);
        t.provenance = Some(Provenance {
            library: "toolz".into(),
            buggy_release: "1.1.0".into(),
            fixed_release: "1.2.0".into(),
            changelog: "Fix interpose on empty input".into(),
            changed_lines: 6,
        });
        let line = serde_json::to_string(&t).unwrap();
        assert!(line.contains(r#""origin":"real""#), "{line}");
        assert!(line.contains(r#""buggy_release":"1.1.0""#), "{line}");
        let back = parse_tasks("t.jsonl", &line).unwrap();
        assert_eq!(back[0], t);
        assert!(parse_tasks("t.jsonl", &line.replace(r#""real""#, r#""other""#)).is_err());
    }

    #[test]
    fn bad_lines_are_reported_with_numbers() {
        let good = serde_json::to_string(&sample()).unwrap();
        let mut no_f2p = sample();
        no_f2p.instance_id = "other".into();
        no_f2p.fail_to_pass.clear();
        let text = format!(
            "{good}\n\n{{not json\n{}\n{good}\n{{\"instance_id\":\"x\"}}\n",
            serde_json::to_string(&no_f2p).unwrap()
        );
        let err = parse_tasks("tasks.jsonl", &text).unwrap_err();
        let TasksError::BadLines { bad, .. } = &err else {
            panic!("{err}")
        };
        let lines: Vec<usize> = bad.iter().map(|b| b.line).collect();
        assert_eq!(lines, vec![3, 4, 5, 6]);
        assert!(bad[1].reason.contains("FAIL_TO_PASS"));
        assert!(bad[2].reason.contains("duplicate"));
        assert!(bad[3].reason.contains("missing field"));
        let msg = err.to_string();
        assert!(msg.contains("tasks.jsonl has 4 bad line(s)"), "{msg}");
        assert!(msg.contains("line 3:"), "{msg}");
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = read_tasks(Path::new("/nonexistent/tasks.jsonl")).unwrap_err();
        assert!(err.to_string().contains("/nonexistent/tasks.jsonl"));
    }
}
