//! JUnit runs of Rust, Node and Go suites (`images/harness/pl_junit.py`): the run's input, and its
//! result turned into per-test outcomes under stable ids. Pure; the verifier's runner and the
//! agent's `run_tests` do the I/O.
//!
//! Test ids (what `--fail-to-pass` takes and receipts show):
//! - Rust: `<source file>::<test path>`, the file that defines the test binary relative to the
//!   workspace: `tests/median.rs::even_length`, `src/lib.rs::tests::mean_of_three`. The same
//!   ids come from cargo-nextest (binary id `pkg::median` mapped to its source file through
//!   cargo's build messages) and from libtest's own JUnit (one report per test binary).
//! - Node (jest): `<test file>::<describe blocks and title joined by " › ">`:
//!   `tests/stats.test.js::median › even length averages the middle pair`.
//! - Go: `<_test.go file declaring the test>::<test>[/<subtest>]`:
//!   `tests/stats_test.go::TestMedian/even_length` (`go test -json`, converted by pl_junit.py).

use std::collections::BTreeMap;

use serde::Deserialize;

use super::junit::{self, CaseResult};
use crate::sandbox::lang::ProjectKind;

/// The run script (`python3 -I -B -c`), the same file baked into rust/node images.
pub const PL_JUNIT: &str = crate::sandbox::prepare::PL_JUNIT;
/// Its last output line: `@@PATCHLOOP-JUNIT@@ rc=N result=<sha256 of result.json>`.
pub const MARKER: &str = "@@PATCHLOOP-JUNIT@@ ";
/// Where the agent's `run_tests` finds the script inside rust/node images.
pub const IN_IMAGE: &str = "/opt/patchloop/harness/pl_junit.py";

/// The run script's stdin.
pub fn input_json(kind: ProjectKind, workspace: &str, out_dir: &str, files: &[String]) -> String {
    serde_json::json!({
        "kind": kind.as_str(),
        "workspace": workspace,
        "out_dir": out_dir,
        "files": files,
    })
    .to_string()
}

/// What the receipt shows as the command of a run; `runner` is the one the run reported
/// (`nextest` / `libtest` for Rust), unknown before any run.
pub fn display_command(kind: ProjectKind, runner: Option<&str>) -> Vec<String> {
    let v: &[&str] = match (kind, runner) {
        (ProjectKind::Rust, Some("nextest")) => &[
            "python3",
            "-I",
            "-B",
            "-c",
            "<pl_junit.py>",
            "cargo test --no-run --offline --message-format=json-render-diagnostics;",
            "cargo nextest run --config-file <harness nextest.toml> --profile patchloop --no-fail-fast",
        ],
        (ProjectKind::Rust, Some("libtest")) => &[
            "python3",
            "-I",
            "-B",
            "-c",
            "<pl_junit.py>",
            "cargo test --no-run --offline --message-format=json-render-diagnostics;",
            "RUSTC_BOOTSTRAP=1 <each test binary> -Z unstable-options --format junit",
        ],
        (ProjectKind::Rust, _) => &[
            "python3",
            "-I",
            "-B",
            "-c",
            "<pl_junit.py>",
            "cargo test --no-run --offline --message-format=json-render-diagnostics;",
            "cargo nextest run --config-file <harness nextest.toml> --profile patchloop --no-fail-fast",
            "(or each test binary: RUSTC_BOOTSTRAP=1 <binary> -Z unstable-options --format junit)",
        ],
        (ProjectKind::Node, _) => &[
            "python3",
            "-I",
            "-B",
            "-c",
            "<pl_junit.py>",
            "node <jest.js> --ci --watchman=false --reporters=default --reporters=<harness jest-junit>",
        ],
        (ProjectKind::Go, _) => &[
            "python3",
            "-I",
            "-B",
            "-c",
            "<pl_junit.py>",
            "go test -json -count=1 ./... (events converted to JUnit)",
        ],
        (ProjectKind::Python, _) => &["python3", "-I", "-B", "-c", "<pl_run.py>"],
    };
    v.iter().map(|s| s.to_string()).collect()
}

/// `out_dir/result.json` as the run script writes it.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct JunitResult {
    #[serde(default)]
    pub kind: Option<String>,
    /// `nextest`, `libtest` or `jest`.
    #[serde(default)]
    pub runner: Option<String>,
    #[serde(default)]
    pub rc: Option<i64>,
    /// Why there may be no report (build failure, jest missing, …).
    #[serde(default)]
    pub problem: Option<String>,
    #[serde(default)]
    pub artifacts: Vec<Artifact>,
    #[serde(default)]
    pub reports: Vec<JunitReport>,
}

/// A test binary from cargo's `compiler-artifact` messages.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct Artifact {
    #[serde(default)]
    pub package_id: String,
    #[serde(default)]
    pub kind: Vec<String>,
    #[serde(default)]
    pub name: String,
    #[serde(default)]
    pub src_path: String,
    pub executable: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
pub struct JunitReport {
    /// The libtest binary that wrote it (None: nextest or jest, one report for the run).
    #[serde(default)]
    pub executable: Option<String>,
    pub xml: String,
}

/// The package name in a cargo package id: `name 0.1.0 (path+file:///w)` (cargo < 1.77) or
/// `path+file:///w/dir#name@0.1.0` / `path+file:///w/name#0.1.0` (the name is left out when it
/// is the directory's).
pub fn package_name(package_id: &str) -> String {
    if let Some((url, frag)) = package_id.rsplit_once('#') {
        if let Some((name, _)) = frag.split_once('@') {
            return name.to_string();
        }
        let path = url.split(['?', '#']).next().unwrap_or(url);
        return path
            .trim_end_matches('/')
            .rsplit('/')
            .next()
            .unwrap_or("")
            .to_string();
    }
    package_id
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_string()
}

/// cargo-nextest's binary id of a test binary: `pkg` (library unit tests), `pkg::name`
/// (integration test), `pkg::bin/name`, `pkg::example/name`, `pkg::bench/name`.
pub fn binary_id(a: &Artifact) -> String {
    let pkg = package_name(&a.package_id);
    let kind = a.kind.first().map(String::as_str).unwrap_or("");
    match kind {
        "test" => format!("{pkg}::{}", a.name),
        "bin" | "example" | "bench" => format!("{pkg}::{kind}/{}", a.name),
        _ => pkg,
    }
}

fn relative(path: &str, workspace: &str) -> String {
    let ws = workspace.trim_end_matches('/');
    path.strip_prefix(ws)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(path)
        .to_string()
}

/// libtest's JUnit splits `a::b::name` into classname `a::b` and name `name`; a test at the
/// crate root gets the test type as classname.
fn libtest_path(classname: &str, name: &str) -> String {
    if matches!(
        classname,
        "" | "integration" | "unittests" | "doctest" | "unknown"
    ) {
        name.to_string()
    } else {
        format!("{classname}::{name}")
    }
}

/// A jest-junit title `ancestors › title`; a test outside any `describe` has no ancestors.
fn jest_title(name: &str) -> String {
    name.trim()
        .trim_start_matches('\u{203a}')
        .trim_start()
        .to_string()
}

/// nextest counts a test as passed when its process exits 0, so code under test calling
/// `process::exit(0)` would pass any test. libtest itself prints `test NAME ... ok` when a test
/// passes; a "pass" without that line in the process's output (nextest stores it in the
/// report) ended early. Such cases become errors and are named here.
fn nextest_early_exit(c: &junit::RawCase) -> bool {
    c.result.outcome == junit::TestOutcome::Passed
        && !c
            .stdout
            .as_deref()
            .is_some_and(|out| out.contains(&format!("test {} ... ok", c.name)))
}

/// Test ids nextest reported as passed although libtest never did (see above): the patched
/// code ended the test process early.
pub fn early_exits(kind: ProjectKind, result: &JunitResult, workspace: &str) -> Vec<String> {
    if kind != ProjectKind::Rust || result.runner.as_deref() != Some("nextest") {
        return Vec::new();
    }
    outcomes(kind, result, workspace)
        .map(|m| {
            m.into_iter()
                .filter(|(_, c)| {
                    c.outcome == junit::TestOutcome::Error
                        && c.message.as_deref() == Some(EARLY_EXIT)
                })
                .map(|(id, _)| id)
                .collect()
        })
        .unwrap_or_default()
}

const EARLY_EXIT: &str =
    "the test process exited 0 before libtest reported the test as passed (process::exit?)";

/// Per-test outcomes of a run under the ids above. `Err` when no report was written or none
/// parses (the reason, with the run's own problem when it said one).
pub fn outcomes(
    kind: ProjectKind,
    result: &JunitResult,
    workspace: &str,
) -> Result<BTreeMap<String, CaseResult>, String> {
    if result.reports.is_empty() {
        return Err(result
            .problem
            .clone()
            .unwrap_or_else(|| "no JUnit report was written".into()));
    }
    let by_exe: BTreeMap<&str, &Artifact> = result
        .artifacts
        .iter()
        .map(|a| (a.executable.as_str(), a))
        .collect();
    let by_binary_id: BTreeMap<String, &Artifact> =
        result.artifacts.iter().map(|a| (binary_id(a), a)).collect();
    let mut out = BTreeMap::new();
    let mut parsed = 0;
    let mut first_error = None;
    for report in &result.reports {
        let cases = match junit::raw_cases(&report.xml) {
            Ok(c) => c,
            Err(e) => {
                first_error.get_or_insert(e.to_string());
                continue;
            }
        };
        parsed += 1;
        for mut c in cases {
            if kind == ProjectKind::Rust
                && report.executable.is_none()
                && result.runner.as_deref() == Some("nextest")
                && nextest_early_exit(&c)
            {
                c.result.outcome = junit::TestOutcome::Error;
                c.result.message = Some(EARLY_EXIT.into());
            }
            let id = match (kind, &report.executable) {
                (ProjectKind::Rust, Some(exe)) => {
                    let file = by_exe
                        .get(exe.as_str())
                        .map(|a| relative(&a.src_path, workspace))
                        .unwrap_or_else(|| exe.rsplit('/').next().unwrap_or(exe).to_string());
                    format!("{file}::{}", libtest_path(&c.classname, &c.name))
                }
                (ProjectKind::Rust, None) => {
                    let bid = if c.classname.is_empty() {
                        &c.suite
                    } else {
                        &c.classname
                    };
                    let file = by_binary_id
                        .get(bid.as_str())
                        .map(|a| relative(&a.src_path, workspace))
                        .unwrap_or_else(|| bid.clone());
                    format!("{file}::{}", c.name)
                }
                (ProjectKind::Node, _) => {
                    format!(
                        "{}::{}",
                        relative(&c.classname, workspace),
                        jest_title(&c.name)
                    )
                }
                (ProjectKind::Go, _) => format!("{}::{}", c.classname, c.name),
                (ProjectKind::Python, _) => junit::key(&c.classname, &c.name),
            };
            junit::merge(&mut out, id, c.result);
        }
    }
    if parsed == 0 {
        return Err(first_error.unwrap_or_else(|| "no JUnit report was written".into()));
    }
    Ok(out)
}

/// The run script's end-of-run marker: exit code and the sha256 of the result file it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Marker {
    pub rc: i64,
    pub result_sha256: String,
}

/// The marker line; `Err` when more than one was printed (the code under test printed a fake).
pub fn marker(output: &str) -> Result<Option<Marker>, String> {
    let found: Vec<Marker> = output
        .lines()
        .filter_map(|l| l.find(MARKER).map(|i| &l[i + MARKER.len()..]))
        .map(|rest| {
            let mut m = Marker {
                rc: -1,
                result_sha256: String::new(),
            };
            for kv in rest.split_whitespace() {
                match kv.split_once('=') {
                    Some(("rc", v)) => m.rc = v.parse().unwrap_or(-1),
                    Some(("result", v)) => m.result_sha256 = v.to_string(),
                    _ => {}
                }
            }
            m
        })
        .collect();
    match found.as_slice() {
        [] => Ok(None),
        [one] => Ok(Some(one.clone())),
        more => Err(format!(
            "{} harness end-of-run markers in the output (the code under test printed fakes)",
            more.len()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::junit::TestOutcome;

    const NEXTEST: &str = include_str!("testdata/nextest_junit.xml");
    const LIBTEST_TESTS: &str = include_str!("testdata/libtest_junit_tests.xml");
    const LIBTEST_LIB: &str = include_str!("testdata/libtest_junit_lib.xml");
    const JEST: &str = include_str!("testdata/jest_junit.xml");

    fn artifacts() -> Vec<Artifact> {
        vec![
            Artifact {
                package_id: "ministats 0.1.0 (path+file:///workspace)".into(),
                kind: vec!["lib".into()],
                name: "ministats".into(),
                src_path: "/workspace/src/lib.rs".into(),
                executable: "/workspace/target/debug/deps/ministats-2157".into(),
            },
            Artifact {
                package_id: "ministats 0.1.0 (path+file:///workspace)".into(),
                kind: vec!["test".into()],
                name: "median".into(),
                src_path: "/workspace/tests/median.rs".into(),
                executable: "/workspace/target/debug/deps/median-272e".into(),
            },
        ]
    }

    #[test]
    fn go_cases_are_keyed_by_their_test_file() {
        let xml = r#"<?xml version="1.0" encoding="UTF-8"?>
<testsuites><testsuite name="example.com/godemo/tests" tests="3"><testcase classname="tests/median_test.go" name="TestOdd" time="0.000"/><testcase classname="tests/median_test.go" name="TestEmpty/nil" time="0.000"><failure message="test failed">    median_test.go:9: boom</failure></testcase></testsuite><testsuite name="example.com/godemo/stats" tests="1"><testcase classname="stats/stats_test.go" name="TestMean"><error message="the package does not build">stats.go:3: undefined: x</error></testcase></testsuite></testsuites>
"#;
        let r = JunitResult {
            kind: Some("go".into()),
            runner: Some("go test -json".into()),
            reports: vec![JunitReport {
                executable: None,
                xml: xml.into(),
            }],
            ..Default::default()
        };
        let o = outcomes(ProjectKind::Go, &r, "/workspace").unwrap();
        let got: Vec<(&str, junit::TestOutcome)> =
            o.iter().map(|(k, v)| (k.as_str(), v.outcome)).collect();
        assert_eq!(
            got,
            vec![
                ("stats/stats_test.go::TestMean", junit::TestOutcome::Error),
                (
                    "tests/median_test.go::TestEmpty/nil",
                    junit::TestOutcome::Failed
                ),
                ("tests/median_test.go::TestOdd", junit::TestOutcome::Passed),
            ]
        );
        assert!(
            display_command(ProjectKind::Go, None)
                .join(" ")
                .contains("go test -json")
        );
    }

    #[test]
    fn package_names_from_old_and_new_package_ids() {
        assert_eq!(
            package_name("ministats 0.1.0 (path+file:///w)"),
            "ministats"
        );
        assert_eq!(package_name("path+file:///w/crates/x#foo@0.2.0"), "foo");
        assert_eq!(package_name("path+file:///w/ministats#0.1.0"), "ministats");
        let a = artifacts();
        assert_eq!(binary_id(&a[0]), "ministats");
        assert_eq!(binary_id(&a[1]), "ministats::median");
        let bin = Artifact {
            kind: vec!["bin".into()],
            name: "tool".into(),
            ..a[0].clone()
        };
        assert_eq!(binary_id(&bin), "ministats::bin/tool");
    }

    #[test]
    fn nextest_cases_are_keyed_by_source_file() {
        let r = JunitResult {
            runner: Some("nextest".into()),
            artifacts: artifacts(),
            reports: vec![JunitReport {
                executable: None,
                xml: NEXTEST.into(),
            }],
            ..Default::default()
        };
        let o = outcomes(ProjectKind::Rust, &r, "/workspace").unwrap();
        assert_eq!(
            o["tests/median.rs::even_length_averages_the_middle_pair"].outcome,
            TestOutcome::Failed
        );
        assert_eq!(
            o["tests/median.rs::odd_length"].outcome,
            TestOutcome::Passed
        );
        assert_eq!(
            o["src/lib.rs::tests::mean_of_three"].outcome,
            TestOutcome::Passed
        );
        assert_eq!(o.len(), 5);
    }

    #[test]
    fn libtest_reports_give_the_same_ids_as_nextest() {
        let r = JunitResult {
            runner: Some("libtest".into()),
            artifacts: artifacts(),
            reports: vec![
                JunitReport {
                    executable: Some("/workspace/target/debug/deps/median-272e".into()),
                    xml: LIBTEST_TESTS.into(),
                },
                JunitReport {
                    executable: Some("/workspace/target/debug/deps/ministats-2157".into()),
                    xml: LIBTEST_LIB.into(),
                },
            ],
            ..Default::default()
        };
        let libtest = outcomes(ProjectKind::Rust, &r, "/workspace").unwrap();
        let nextest = outcomes(
            ProjectKind::Rust,
            &JunitResult {
                artifacts: artifacts(),
                reports: vec![JunitReport {
                    executable: None,
                    xml: NEXTEST.into(),
                }],
                ..Default::default()
            },
            "/workspace",
        )
        .unwrap();
        let ids = |m: &BTreeMap<String, CaseResult>| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.outcome))
                .collect::<Vec<_>>()
        };
        assert_eq!(ids(&libtest), ids(&nextest));
    }

    #[test]
    fn a_nextest_pass_without_libtests_ok_line_is_an_early_exit() {
        // What a test process that called process::exit(0) leaves (seen with nextest 0.9).
        let xml = NEXTEST.replace("test odd_length ... ok\n", "");
        assert_ne!(xml, NEXTEST, "the fixture changed");
        let r = JunitResult {
            runner: Some("nextest".into()),
            artifacts: artifacts(),
            reports: vec![JunitReport {
                executable: None,
                xml,
            }],
            ..Default::default()
        };
        let o = outcomes(ProjectKind::Rust, &r, "/workspace").unwrap();
        assert_eq!(o["tests/median.rs::odd_length"].outcome, TestOutcome::Error);
        assert_eq!(
            o["tests/median.rs::single_value"].outcome,
            TestOutcome::Passed
        );
        assert_eq!(
            early_exits(ProjectKind::Rust, &r, "/workspace"),
            vec!["tests/median.rs::odd_length"]
        );
    }

    #[test]
    fn jest_cases_are_file_and_full_title() {
        let r = JunitResult {
            runner: Some("jest".into()),
            reports: vec![JunitReport {
                executable: None,
                xml: JEST.into(),
            }],
            ..Default::default()
        };
        let o = outcomes(ProjectKind::Node, &r, "/workspace").unwrap();
        assert_eq!(
            o["tests/stats.test.js::median › even length averages the middle pair"].outcome,
            TestOutcome::Failed
        );
        assert_eq!(
            o["tests/stats.test.js::mean of three"].outcome,
            TestOutcome::Passed
        );
        assert_eq!(o.len(), 4);
    }

    #[test]
    fn no_report_is_an_error_with_the_runs_reason() {
        let r = JunitResult {
            problem: Some("`cargo test --no-run` failed with exit code 101".into()),
            ..Default::default()
        };
        let e = outcomes(ProjectKind::Rust, &r, "/workspace").unwrap_err();
        assert!(e.contains("--no-run"), "{e}");
        let garbage = JunitResult {
            reports: vec![JunitReport {
                executable: None,
                xml: "<testsuites><testsuite".into(),
            }],
            ..Default::default()
        };
        assert!(outcomes(ProjectKind::Node, &garbage, "/workspace").is_err());
    }

    #[test]
    fn markers_are_counted() {
        assert_eq!(
            marker("x\n@@PATCHLOOP-JUNIT@@ rc=101 result=ab12\n"),
            Ok(Some(Marker {
                rc: 101,
                result_sha256: "ab12".into()
            }))
        );
        assert_eq!(marker("nothing"), Ok(None));
        assert!(marker("@@PATCHLOOP-JUNIT@@ rc=0\n@@PATCHLOOP-JUNIT@@ rc=1\n").is_err());
    }

    #[test]
    fn input_names_kind_and_paths() {
        let v: serde_json::Value =
            serde_json::from_str(&input_json(ProjectKind::Node, "/workspace", "/tmp/o", &[]))
                .unwrap();
        assert_eq!(v["kind"], "node");
        assert_eq!(v["out_dir"], "/tmp/o");
    }
}
