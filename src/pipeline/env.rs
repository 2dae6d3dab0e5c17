//! `fix`'s view of the environment: failing ids from a saved CI log (`--ci-log`, the action's
//! extractor), and — without named targets, when the image's Python differs from the CI's —
//! the reproduction's failures split into targets and suspected environmental ones
//! (`sandbox::envfail`), which the model is told are not its task.

use std::path::Path;

use anyhow::{Context, anyhow};
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

use crate::agent::tools::{self, ToolConfig};
use crate::sandbox::container::Container;
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::{ExecRequest, Sandbox, envfail};
use crate::verify::{PreparedImage, junit};

/// The failing test ids of a saved CI log (the same extractor as the action).
pub fn ci_log_targets(path: &Path) -> anyhow::Result<Vec<String>> {
    let bytes = std::fs::read(path)
        .with_context(|| format!("cannot read the CI log {}", path.display()))?;
    let found = crate::github::logs::extract(&String::from_utf8_lossy(&bytes));
    if found.failing_tests.is_empty() {
        return Err(anyhow!(
            "{}: no failing test ids found in the log (pytest `FAILED …` lines, cargo/nextest, jest, go test)\n  pass the failed job's log as GitHub shows it (`gh run view --log-failed`), or name the tests with --fail-to-pass",
            path.display()
        ));
    }
    Ok(found.failing_tests)
}

/// The reproduction's failures, split.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EnvSplit {
    /// How the image's Python differs from the CI's.
    pub note: String,
    pub targets: Vec<String>,
    /// (id, why) of each failure suspected environmental.
    pub suspected: Vec<(String, String)>,
}

impl EnvSplit {
    /// The paragraph the model's task gets.
    pub fn statement(&self) -> String {
        let mut s = format!(
            "Environment: {}. These tests fail only because of that (suspected environmental); they are not your task and need not pass:\n",
            self.note
        );
        for (id, why) in &self.suspected {
            s.push_str(&format!("- {id}: {why}\n"));
        }
        s
    }
}

/// (id, failure text) of every failing test in a pytest JUnit report.
pub fn failures(xml: &str) -> Vec<(String, String)> {
    let Ok(report) = Report::deserialize_from_str(&junit::strip_timestamps(xml)) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = Vec::new();
    for suite in &report.test_suites {
        for case in &suite.test_cases {
            if let TestCaseStatus::NonSuccess {
                kind: NonSuccessKind::Failure | NonSuccessKind::Error,
                message,
                description,
                ..
            } = &case.status
            {
                let classname = case.classname.as_ref().map(|c| c.as_str()).unwrap_or("");
                let id = junit::node_id_for_key(&junit::key(classname, case.name.as_str()));
                let text = format!(
                    "{}\n{}",
                    description.as_ref().map(|d| d.as_str()).unwrap_or(""),
                    message.as_ref().map(|m| m.as_str()).unwrap_or("")
                );
                match out.iter_mut().find(|(i, _)| *i == id) {
                    Some(e) => e.1.push_str(&text),
                    None => out.push((id, text)),
                }
            }
        }
    }
    out
}

/// Without named targets: when the image's environment note says its Python differs from the
/// CI's, one run of the tests in a fresh container, its failures split (`None`: the Python is
/// the CI's, or the run gave no report).
pub async fn split_environmental(
    docker: &bollard::Docker,
    image: &PreparedImage,
    tools_cfg: &ToolConfig,
    run_id: &str,
) -> anyhow::Result<Option<EnvSplit>> {
    let labels = docker
        .inspect_image(&image.tag)
        .await
        .ok()
        .and_then(|i| i.config)
        .and_then(|c| c.labels)
        .unwrap_or_default();
    let Some(note) = labels
        .get(crate::sandbox::image::LABEL_ENV_NOTE)
        .and_then(|n| {
            n.split("; ")
                .find(|p| p.contains("the repository tests with Python"))
        })
        .map(str::to_string)
    else {
        return Ok(None);
    };
    let policy = ContainerPolicy {
        read_only_paths: image.tests_dirs.clone(),
        ..Default::default()
    };
    let c = Container::start(docker, &image.tag, &policy, run_id, "env-check")
        .await
        .with_context(|| format!("starting a container from {}", image.tag))?;
    let xml = "/tmp/patchloop-env-check.xml";
    let run = async {
        c.exec(
            ExecRequest::shell(tools::run_tests_script(
                &tools_cfg.test_cmd,
                xml,
                "/tmp/patchloop-env-check",
                &[],
            ))
            .timeout(tools_cfg.test_timeout),
        )
        .await?;
        c.exec(ExecRequest::argv(["cat", xml]).output_cap(8 << 20))
            .await
    }
    .await;
    if let Err(e) = c.remove().await {
        tracing::warn!("removing the env-check container failed (the reaper will retry): {e}");
    }
    let read = run.context("running the tests to tell environmental failures apart")?;
    let text = String::from_utf8_lossy(&read.output.kept_bytes()).into_owned();
    let failing = failures(&text);
    if failing.is_empty() {
        return Ok(None);
    }
    let mut split = EnvSplit {
        note,
        ..Default::default()
    };
    for (id, text) in failing {
        match envfail::suspected(&text, crate::sandbox::WORKSPACE) {
            Some(why) => split.suspected.push((id, why)),
            None => split.targets.push(id),
        }
    }
    Ok(Some(split))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_of_a_pytest_report_with_their_tracebacks() {
        let xml = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" tests="3" timestamp="2026-11-29T13:48:27.172173"><testcase classname="tests.test_a" name="test_env"><failure message="AttributeError: x">/usr/lib/python3.11/collections/__init__.py:9: in f
E   AttributeError: x</failure></testcase><testcase classname="tests.test_a" name="test_bug"><failure message="assert 1 == 2">pkg/a.py:3: in f
E   assert 1 == 2</failure></testcase><testcase classname="tests.test_a" name="test_ok"/></testsuite></testsuites>"#;
        let f = failures(xml);
        assert_eq!(
            f.iter().map(|(i, _)| i.as_str()).collect::<Vec<_>>(),
            vec!["tests/test_a.py::test_env", "tests/test_a.py::test_bug"]
        );
        assert!(envfail::suspected(&f[0].1, "/workspace").is_some());
        assert!(envfail::suspected(&f[1].1, "/workspace").is_none());
    }

    #[test]
    fn a_log_without_failing_ids_is_an_error_naming_the_fix() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("ci.log");
        std::fs::write(&p, "2024-01-01T00:00:00Z nothing here\n").unwrap();
        let e = ci_log_targets(&p).unwrap_err().to_string();
        assert!(e.contains("--fail-to-pass"), "{e}");
        std::fs::write(
            &p,
            "2024-01-01T00:00:00Z ##[group]Run pytest\n2024-01-01T00:00:01Z ##[endgroup]\n2024-01-01T00:00:02Z ============ short test summary info ============\n2024-01-01T00:00:02Z FAILED tests/test_a.py::test_x - AssertionError\n2024-01-01T00:00:02Z ##[error]Process completed with exit code 1.\n",
        )
        .unwrap();
        assert_eq!(ci_log_targets(&p).unwrap(), vec!["tests/test_a.py::test_x"]);
        assert!(ci_log_targets(&d.path().join("missing.log")).is_err());
    }
}
