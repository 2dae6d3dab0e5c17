//! [`SuiteRunner`] over a sandbox container of the prepared original: each candidate file is
//! written into the workspace, the suite runs with a JUnit report, and the original is restored.

use crate::testcmd::{Run, TestCommand};
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use async_trait::async_trait;

use crate::bench::generate::SuiteRunner;
use crate::bench::validate::{CaseOutcome, SuiteResult};
use crate::sandbox::{ExecRequest, ExecStatus, Sandbox};

const JUNIT: &str = "/tmp/patchloop-bench-junit.xml";

/// The verbosity flags a collection run tries, in order (see [`ContainerRunner::new`]).
const COLLECT_QUIET: [&str; 5] = ["-q", "", "-qq", "-qqq", "-qqqq"];

/// JUnit key → node id from `--collect-only` output (the node-id lines of `-q`).
fn node_ids_from_collection(text: &str) -> BTreeMap<String, String> {
    text.lines()
        .map(str::trim)
        .filter(|id| crate::testid::TestId::new(*id).is_pytest() && !id.contains(' '))
        .map(|id| (key_for_node_id(id), id.to_string()))
        .collect()
}

pub struct ContainerRunner<'a> {
    sandbox: &'a dyn Sandbox,
    test_cmd: TestCommand,
    /// JUnit key (`classname::name`) → pytest node id, from a collection run.
    node_ids: BTreeMap<String, String>,
    originals: BTreeMap<String, String>,
    /// Slowest run of the original so far: candidate runs may take 5× that + 30 s before they
    /// count as hung (mutants can loop forever).
    slowest_original: std::sync::Mutex<Duration>,
}

impl<'a> ContainerRunner<'a> {
    /// Collect the suite's node ids (the JUnit report names tests differently).
    pub async fn new(
        sandbox: &'a dyn Sandbox,
        test_cmd: &TestCommand,
        originals: BTreeMap<String, String>,
    ) -> anyhow::Result<Self> {
        let mut runner = ContainerRunner {
            sandbox,
            test_cmd: test_cmd.clone(),
            node_ids: BTreeMap::new(),
            originals,
            slowest_original: std::sync::Mutex::new(Duration::ZERO),
        };
        // `--collect-only` lists node ids only at verbosity -1, and a project's addopts adds to
        // ours (arrow's `-v` turns `-q` into the item tree, `-q` into `-qq` file counts): try
        // the usual `-q` first, then the counts that undo one `-q` or one to three `-v`.
        for quiet in COLLECT_QUIET {
            let collect = sandbox
                .exec(
                    ExecRequest::shell(format!(
                        "cd /workspace && {} 2>&1",
                        runner.render(&[quiet, "--collect-only", "-p", "no:cacheprovider"], &[])
                    ))
                    .timeout(Duration::from_secs(300))
                    .output_cap(16 << 20),
                )
                .await?;
            let text = collect.output.render();
            if !collect.status.success() {
                bail!(
                    "collecting the tests failed ({:?}); the suite must collect cleanly on the original code:\n{}",
                    collect.status,
                    crate::sandbox::output::truncate_text(&text, 4000)
                );
            }
            runner.node_ids = node_ids_from_collection(&text);
            if !runner.node_ids.is_empty() {
                break;
            }
        }
        Ok(runner)
    }

    /// The repository's command rendered with these pytest options and selection (the
    /// command's own paths when the selection is empty).
    pub fn render(&self, options: &[&str], selection: &[String]) -> String {
        let options: Vec<String> = options
            .iter()
            .filter(|o| !o.is_empty())
            .map(|o| o.to_string())
            .collect();
        self.test_cmd.shell(&Run {
            workspace: crate::sandbox::WORKSPACE,
            options: &options,
            selection,
        })
    }

    /// The command, typed.
    pub fn command(&self) -> &TestCommand {
        &self.test_cmd
    }

    async fn write(&self, path: &str, text: &str) -> anyhow::Result<()> {
        let r = self
            .sandbox
            .exec(
                ExecRequest::argv(["sh", "-c", "cat > \"$1\"", "sh", path])
                    .stdin(text.as_bytes().to_vec())
                    .timeout(Duration::from_secs(30)),
            )
            .await?;
        if !r.status.success() {
            bail!("cannot write {path} in the sandbox: {}", r.output.render());
        }
        Ok(())
    }
}

#[async_trait]
impl SuiteRunner for ContainerRunner<'_> {
    async fn run(&self, replace: Option<(&str, &str)>) -> anyhow::Result<Option<SuiteResult>> {
        if let Some((path, text)) = replace {
            self.write(path, text).await?;
        }
        let script = format!(
            "rm -f {JUNIT}; cd /workspace && {} >/dev/null 2>&1; cat {JUNIT}",
            self.render(
                &[
                    "-q",
                    "-p",
                    "no:cacheprovider",
                    &format!("--junitxml={JUNIT}")
                ],
                &[]
            )
        );
        let slowest = self.slowest_original.lock().map(|d| *d).unwrap_or_default();
        let timeout = if replace.is_none() || slowest.is_zero() {
            Duration::from_secs(1800)
        } else {
            slowest * 5 + Duration::from_secs(30)
        };
        let t0 = Instant::now();
        let result = self
            .sandbox
            .exec(
                ExecRequest::shell(script)
                    .timeout(timeout)
                    .output_cap(32 << 20),
            )
            .await;
        if replace.is_none()
            && let Ok(mut s) = self.slowest_original.lock()
        {
            *s = (*s).max(t0.elapsed());
        }
        if let Some((path, _)) = replace {
            let original = self
                .originals
                .get(path)
                .with_context(|| format!("no original text for {path}"))?;
            self.write(path, original).await?;
        }
        let r = result?;
        if r.status == ExecStatus::TimedOut || !r.status.success() || r.output.is_truncated() {
            return Ok(None);
        }
        match suite_from_junit(&r.output.render(), &self.node_ids) {
            Ok(s) => Ok(Some(s)),
            Err(e) => {
                tracing::debug!(error = %e, "unreadable JUnit report");
                Ok(None)
            }
        }
    }

    fn test_command(&self) -> TestCommand {
        self.test_cmd.clone()
    }
}

/// The JUnit key pytest gives a node id: `tests/test_x.py::C::t` → `tests.test_x.C::t`.
pub fn key_for_node_id(node_id: &str) -> String {
    crate::testid::TestId::new(node_id).junit_key()
}

/// pytest's JUnit XML as node id → outcome. Unknown keys keep the key as their id; a test
/// reported twice (failed call plus teardown error) keeps the worse outcome.
/// Can pytest select this id on the command line? It must be a `path.py::…` node id, and a
/// parametrisation must not contain `::` (pytest splits the id there, e.g. an IPv6 URL
/// parameter), so such tests never enter FAIL_TO_PASS / PASS_TO_PASS.
pub fn selectable(id: &str) -> bool {
    crate::testid::TestId::new(id).selectable()
}

pub fn suite_from_junit(
    xml: &str,
    node_ids: &BTreeMap<String, String>,
) -> anyhow::Result<SuiteResult> {
    use crate::verify::junit::{self, TestOutcome};
    let cases = junit::raw_cases(xml).context("the JUnit report does not parse")?;
    let mut tests: BTreeMap<String, CaseOutcome> = BTreeMap::new();
    for case in cases {
        let key = format!("{}::{}", case.classname, case.name);
        let id = node_ids.get(&key).cloned().unwrap_or(key);
        if !selectable(&id) {
            // A task may only name tests pytest can select again: leave this one out.
            continue;
        }
        let skipped = case.result.outcome == TestOutcome::Skipped;
        let ok = skipped || case.result.outcome == TestOutcome::Passed;
        let message = if ok { None } else { case.result.message };
        let outcome = CaseOutcome {
            ok,
            skipped,
            message,
        };
        match tests.get_mut(&id) {
            Some(old) if old.ok && !ok => *old = outcome,
            Some(_) => {}
            None => {
                tests.insert(id, outcome);
            }
        }
    }
    Ok(SuiteResult { tests })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_ids_pytest_can_select_again() {
        assert!(selectable("tests/test_a.py::test_x"));
        assert!(selectable("tests/test_a.py::TestC::test_y[1-2]"));
        assert!(!selectable("tests.test_a::test_x"));
        assert!(!selectable(
            "tests/test_u.py::test_q[https://[::101.45.75.219]:80/?hi=bye]"
        ));
        assert!(!selectable("no_separator"));
    }

    /// A sandbox whose `pytest --collect-only` behaves as with `addopts = -v` (arrow's tox.ini):
    /// one `-q` gives the item tree, two give node ids, none gives the tree too.
    struct VerboseAddopts {
        commands: std::sync::Mutex<Vec<String>>,
    }

    #[async_trait]
    impl Sandbox for VerboseAddopts {
        async fn exec(
            &self,
            req: ExecRequest,
        ) -> Result<crate::sandbox::ExecResult, crate::sandbox::SandboxError> {
            let cmd = req.argv.join(" ");
            self.commands.lock().unwrap().push(cmd.clone());
            let quiet: usize = cmd
                .split_whitespace()
                .filter(|w| w.starts_with("-q"))
                .map(|w| w.len() - 1)
                .sum();
            let text = match quiet {
                2 => {
                    "tests/test_api.py::TestModule::test_get\ntests/test_api.py::test_now\n\n2 tests collected in 0.1s\n"
                }
                0 | 1 => {
                    "collected 2 items\n\n<Package tests>\n  <Module test_api.py>\n    <Class TestModule>\n      <Function test_get>\n    <Function test_now>\n"
                }
                _ => "tests/test_api.py: 2\n",
            };
            let mut output = crate::sandbox::CappedOutput::new(1 << 20);
            output.push(text.as_bytes());
            Ok(crate::sandbox::ExecResult {
                status: ExecStatus::Exited(0),
                output,
                duration: Duration::ZERO,
            })
        }
        async fn diff(&self) -> Result<String, crate::sandbox::SandboxError> {
            Ok(String::new())
        }
        fn id(&self) -> &str {
            "verbose-addopts"
        }
    }

    #[tokio::test]
    async fn node_ids_are_collected_when_the_projects_addopts_say_verbose() {
        let sb = VerboseAddopts {
            commands: std::sync::Mutex::new(Vec::new()),
        };
        let runner = ContainerRunner::new(&sb, &TestCommand::python_pytest(), BTreeMap::new())
            .await
            .unwrap();
        assert_eq!(
            runner.node_ids.values().collect::<Vec<_>>(),
            vec![
                "tests/test_api.py::TestModule::test_get",
                "tests/test_api.py::test_now"
            ]
        );
        // `-q` (the tree), no flag (the tree), then `-qq`: the ids
        assert_eq!(sb.commands.lock().unwrap().len(), 3);
    }

    const XML: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4" time="0.1" timestamp="2026-11-29T13:48:27.172173" hostname="h"><testcase classname="tests.test_core" name="test_ok" time="0.001" /><testcase classname="tests.test_core" name="test_bad" time="0.001"><failure message="assert 1 == 2">trace</failure></testcase><testcase classname="tests.test_core.TestC" name="test_p[a-b]" time="0.001"><skipped type="pytest.skip" message="skip">s</skipped></testcase><testcase classname="tests.test_core" name="test_bad" time="0.001"><error message="teardown">t</error></testcase></testsuite></testsuites>"#;

    #[test]
    fn junit_to_node_ids() {
        let mut ids = BTreeMap::new();
        for id in [
            "tests/test_core.py::test_ok",
            "tests/test_core.py::test_bad",
            "tests/test_core.py::TestC::test_p[a-b]",
        ] {
            ids.insert(key_for_node_id(id), id.to_string());
        }
        let s = suite_from_junit(XML, &ids).unwrap();
        assert_eq!(s.tests.len(), 3);
        assert!(s.tests["tests/test_core.py::test_ok"].ok);
        assert!(!s.tests["tests/test_core.py::test_ok"].skipped);
        // green, but known as a skip: never a FAIL_TO_PASS target (validate::Baseline)
        assert!(s.tests["tests/test_core.py::TestC::test_p[a-b]"].ok);
        assert!(s.tests["tests/test_core.py::TestC::test_p[a-b]"].skipped);
        let bad = &s.tests["tests/test_core.py::test_bad"];
        assert!(!bad.ok);
        assert_eq!(bad.message.as_deref(), Some("assert 1 == 2"));
        assert!(suite_from_junit("<nope", &ids).is_err());
    }
}
