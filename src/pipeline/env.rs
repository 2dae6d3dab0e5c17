//! `fix`'s view of the environment: failing ids from a saved CI log (`--ci-log`, the action's
//! extractor), and — without named targets, when the image's Python differs from the CI's —
//! the reproduction's failures split into targets and suspected environmental ones
//! (`sandbox::envfail`), which the model is told are not its task.

use std::path::Path;

use anyhow::{Context, anyhow};
use quick_junit::{NonSuccessKind, Report, TestCaseStatus};

use crate::agent::tools::{self, ToolConfig};
use crate::sandbox::cipython::{self, CiPython, Unavailable};
use crate::sandbox::container::Container;
use crate::sandbox::image::{BaseOptions, ProgressFn};
use crate::sandbox::policy::ContainerPolicy;
use crate::sandbox::prepare::{self, PrepareOptions};
use crate::sandbox::{ExecRequest, Sandbox, envfail};
use crate::verify::PreparedImage;
use crate::verify::junit::{self, TestOutcome};

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

/// How the environmental failures were told apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Method {
    /// The failing tests ran again on an image of the CI's Python: those that passed there are
    /// environmental, those that failed there too are targets.
    Rerun { python: String, image: String },
    /// No image of the CI's Python could be had (why): failures whose traceback ends outside
    /// the repository are suspected environmental (`sandbox::envfail`).
    Tracebacks { why: String },
}

/// The reproduction's failures, split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvSplit {
    /// How the image's Python differs from the CI's.
    pub note: String,
    pub targets: Vec<String>,
    /// (id, why) of each failure that is not the repair's task.
    pub environmental: Vec<(String, String)>,
    pub method: Method,
}

impl EnvSplit {
    /// The paragraph the model's task gets.
    pub fn statement(&self) -> String {
        let mut s = match &self.method {
            Method::Rerun { python, .. } => format!(
                "Environment: {}. These tests fail here but pass on the CI's Python {python} (environmental); they are not your task and need not pass:\n",
                self.note
            ),
            Method::Tracebacks { .. } => format!(
                "Environment: {}. These tests fail only because of that (suspected environmental); they are not your task and need not pass:\n",
                self.note
            ),
        };
        for (id, why) in &self.environmental {
            s.push_str(&format!("- {id}: {why}\n"));
        }
        s
    }

    /// One line for `fix`'s output and the receipt: how the failures were told apart and which
    /// are not targets.
    pub fn summary(&self) -> String {
        let ids = |v: Vec<&str>| {
            if v.is_empty() {
                "none".to_string()
            } else {
                v.join(", ")
            }
        };
        let env = ids(self.environmental.iter().map(|(i, _)| i.as_str()).collect());
        match &self.method {
            Method::Rerun { python, image } => format!(
                "the failing tests ran again on the CI's Python {python} ({image}): environmental (passed there, not targets): {env}; failed there too (targets): {}",
                ids(self.targets.iter().map(String::as_str).collect())
            ),
            Method::Tracebacks { why } => format!(
                "no run on the CI's Python ({why}); by their tracebacks, suspected environmental (not targets): {env}"
            ),
        }
    }
}

/// The CI's `X.Y` from the image's environment note (`the repository tests with Python X.Y; …`).
pub fn ci_python(note: &str) -> Option<String> {
    let rest = note.split("tests with Python ").nth(1)?;
    let v: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '.')
        .collect();
    crate::sandbox::image::is_python_version(&v).then_some(v)
}

/// Splits failures by their run on the CI's Python (pure): failed or errored there too →
/// target; passed there → environmental; not run there (skipped, missing) → by its traceback.
pub fn split_by_rerun(
    failing: Vec<(String, String)>,
    ci_run: &junit::JunitRun,
    python: &str,
) -> (Vec<String>, Vec<(String, String)>) {
    let mut targets = Vec::new();
    let mut environmental = Vec::new();
    for (id, text) in failing {
        let outcome = ci_run
            .cases
            .get(&junit::key_for_node_id(&id))
            .map(|c| c.outcome)
            .unwrap_or(TestOutcome::Missing);
        match outcome {
            TestOutcome::Passed => {
                environmental.push((id, format!("passes on the CI's Python {python}")));
            }
            TestOutcome::Failed | TestOutcome::Error => targets.push(id),
            TestOutcome::Skipped | TestOutcome::Missing => {
                match envfail::suspected(&text, crate::sandbox::WORKSPACE) {
                    Some(why) => environmental.push((
                        id,
                        format!(
                            "not run on the CI's Python {python} ({}); suspected: {why}",
                            outcome.as_str()
                        ),
                    )),
                    None => targets.push(id),
                }
            }
        }
    }
    (targets, environmental)
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

/// Runs `tests` (ids) once in a fresh container of `tag` and returns the JUnit report's text.
async fn run_once(
    docker: &bollard::Docker,
    tag: &str,
    tests_dirs: &[String],
    tools_cfg: &ToolConfig,
    run_id: &str,
    tests: &[String],
) -> anyhow::Result<String> {
    let policy = ContainerPolicy {
        read_only_paths: tests_dirs.to_vec(),
        ..Default::default()
    };
    let c = Container::start(docker, tag, &policy, run_id, "env-check")
        .await
        .with_context(|| format!("starting a container from {tag}"))?;
    let xml = "/tmp/patchloop-env-check.xml";
    let run = async {
        c.exec(
            ExecRequest::shell(tools::run_tests_script(
                &tools_cfg.test_cmd,
                xml,
                "/tmp/patchloop-env-check",
                tests,
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
    let read = run.with_context(|| format!("running the tests in {tag}"))?;
    Ok(String::from_utf8_lossy(&read.output.kept_bytes()).into_owned())
}

/// Where the second run on the CI's Python comes from.
#[derive(Clone)]
pub struct CiRun<'a> {
    /// The checkout (prepared again on the CI's Python); `None` with `--image` alone.
    pub repo: Option<&'a Path>,
    pub mode: CiPython,
    pub progress: Option<ProgressFn>,
}

/// The failing `tests` run on an image of the CI's Python `version`: its base had as
/// `ci.mode` allows (`sandbox::cipython`), the checkout prepared on it with the same test
/// dependencies, one run in a fresh container. Returns the image and its report.
async fn rerun_on_ci_python(
    docker: &bollard::Docker,
    image: &PreparedImage,
    tools_cfg: &ToolConfig,
    run_id: &str,
    ci: &CiRun<'_>,
    version: &str,
    tests: &[String],
) -> Result<(String, junit::JunitRun), Unavailable> {
    let opts = BaseOptions {
        progress: ci.progress.clone(),
        ..Default::default()
    };
    let base = cipython::ensure_base(docker, &opts, version, ci.mode).await?;
    let Some(repo) = ci.repo else {
        return Err(Unavailable::NoCheckout {
            version: version.into(),
        });
    };
    let prepared = prepare::prepare(
        docker,
        &PrepareOptions {
            path: repo.to_path_buf(),
            test_cmd: Some(image.test_cmd.clone()),
            tests_dirs: image.tests_dirs.clone(),
            base: opts.clone(),
            base_image: Some(base.clone()),
            ..Default::default()
        },
    )
    .await
    .map_err(|e| Unavailable::Prepare {
        version: version.into(),
        base: base.clone(),
        reason: e.to_string(),
    })?;
    let no_report = |reason: String| Unavailable::NoReport {
        version: version.into(),
        image: prepared.tag.clone(),
        reason,
    };
    let xml = run_once(
        docker,
        &prepared.tag,
        &prepared.tests_dirs,
        tools_cfg,
        run_id,
        tests,
    )
    .await
    .map_err(|e| no_report(format!("{e:#}")))?;
    let report = junit::parse(&xml).map_err(|e| no_report(e.to_string()))?;
    if report.cases.is_empty() {
        return Err(no_report("no test case in it".into()));
    }
    Ok((prepared.tag, report))
}

/// Without named targets: when the image's environment note says its Python differs from the
/// CI's, one run of the tests in a fresh container, its failures split — by a second run of
/// the failing tests on an image of the CI's Python where one can be had, else by their
/// tracebacks (`None`: the Python is the CI's, or the run gave no report).
pub async fn split_environmental(
    docker: &bollard::Docker,
    image: &PreparedImage,
    tools_cfg: &ToolConfig,
    run_id: &str,
    ci: &CiRun<'_>,
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
    let text = run_once(
        docker,
        &image.tag,
        &image.tests_dirs,
        tools_cfg,
        run_id,
        &[],
    )
    .await
    .context("running the tests to tell environmental failures apart")?;
    let failing = failures(&text);
    if failing.is_empty() {
        return Ok(None);
    }
    let rerun = match ci_python(&note) {
        Some(v) => {
            let ids: Vec<String> = failing.iter().map(|(i, _)| i.clone()).collect();
            rerun_on_ci_python(docker, image, tools_cfg, run_id, ci, &v, &ids)
                .await
                .map(|(tag, run)| (v, tag, run))
        }
        None => Err(Unavailable::BadVersion {
            version: note.clone(),
        }),
    };
    let split = match rerun {
        Ok((python, tag, run)) => {
            let (targets, environmental) = split_by_rerun(failing, &run, &python);
            EnvSplit {
                note,
                targets,
                environmental,
                method: Method::Rerun { python, image: tag },
            }
        }
        Err(why) => {
            let mut targets = Vec::new();
            let mut environmental = Vec::new();
            for (id, text) in failing {
                match envfail::suspected(&text, crate::sandbox::WORKSPACE) {
                    Some(w) => environmental.push((id, w)),
                    None => targets.push(id),
                }
            }
            EnvSplit {
                note,
                targets,
                environmental,
                method: Method::Tracebacks {
                    why: why.to_string(),
                },
            }
        }
    };
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

    fn run_of(cases: &[(&str, TestOutcome)]) -> junit::JunitRun {
        junit::JunitRun {
            cases: cases
                .iter()
                .map(|(id, o)| {
                    (
                        junit::key_for_node_id(id),
                        junit::CaseResult {
                            outcome: *o,
                            duration: None,
                            message: None,
                        },
                    )
                })
                .collect(),
        }
    }

    #[test]
    fn the_run_on_the_ci_python_decides_and_tracebacks_only_for_what_it_did_not_run() {
        let own = "chunks/__init__.py:6: in pairs\nE   AttributeError: module 'itertools' has no attribute 'batched'".to_string();
        let stdlib = "/usr/lib/python3.11/imp.py:1: in <module>\nE   DeprecationWarning: the imp module is deprecated".to_string();
        let failing = vec![
            ("tests/test_chunks.py::test_pairs".to_string(), own.clone()),
            ("tests/test_calc.py::test_double".to_string(), own.clone()),
            ("tests/test_a.py::test_err".to_string(), own.clone()),
            ("tests/test_a.py::test_skipped".to_string(), stdlib.clone()),
            ("tests/test_a.py::test_gone".to_string(), own.clone()),
        ];
        let run = run_of(&[
            ("tests/test_chunks.py::test_pairs", TestOutcome::Passed),
            ("tests/test_calc.py::test_double", TestOutcome::Failed),
            ("tests/test_a.py::test_err", TestOutcome::Error),
            ("tests/test_a.py::test_skipped", TestOutcome::Skipped),
        ]);
        let (targets, env) = split_by_rerun(failing, &run, "3.13");
        // Its traceback ends in the repository (a target by tracebacks), but it passes on 3.13.
        assert_eq!(
            env[0],
            (
                "tests/test_chunks.py::test_pairs".to_string(),
                "passes on the CI's Python 3.13".to_string()
            )
        );
        assert_eq!(
            targets,
            vec![
                "tests/test_calc.py::test_double",
                "tests/test_a.py::test_err",
                "tests/test_a.py::test_gone"
            ]
        );
        assert_eq!(env.len(), 2);
        assert_eq!(env[1].0, "tests/test_a.py::test_skipped");
        assert!(
            env[1]
                .1
                .contains("not run on the CI's Python 3.13 (skipped)"),
            "{}",
            env[1].1
        );
    }

    #[test]
    fn the_ci_python_is_read_from_the_note_and_the_summary_names_the_method() {
        assert_eq!(
            ci_python("the repository tests with Python 3.13; this image has Python 3.11 (x)")
                .as_deref(),
            Some("3.13")
        );
        assert_eq!(ci_python("the repository tests with Python 3; x"), None);
        assert_eq!(ci_python("nothing"), None);
        let mut split = EnvSplit {
            note: "n".into(),
            targets: vec!["t::a".into()],
            environmental: vec![("t::b".into(), "passes on the CI's Python 3.13".into())],
            method: Method::Rerun {
                python: "3.13".into(),
                image: "img:1".into(),
            },
        };
        assert_eq!(
            split.summary(),
            "the failing tests ran again on the CI's Python 3.13 (img:1): environmental (passed there, not targets): t::b; failed there too (targets): t::a"
        );
        assert!(split.statement().contains("pass on the CI's Python 3.13"));
        assert!(split.statement().contains("- t::b: passes on"));
        split.method = Method::Tracebacks {
            why: "--ci-python off".into(),
        };
        assert!(
            split
                .summary()
                .starts_with("no run on the CI's Python (--ci-python off); by their tracebacks")
        );
        assert!(split.statement().contains("suspected environmental"));
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
