//! The `run_tests` tool: the suite run with a JUnit report and its summary for the model.

use super::ToolConfig;
use crate::sandbox::output::truncate_text;
use crate::sandbox::{ExecRequest, ExecStatus, Sandbox, SandboxError};
use crate::testcmd::{Run, TestCommand};

/// What one test run gave, with the JUnit summary when the XML was produced.
#[derive(Debug, Clone, PartialEq)]
pub struct TestRun {
    pub status: ExecStatus,
    pub summary: Option<TestSummary>,
    /// The command's output (capped).
    pub output: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestSummary {
    pub passed: usize,
    pub failed: usize,
    pub errors: usize,
    pub skipped: usize,
    /// `classname::name` of every failed or errored test.
    pub failing: Vec<String>,
}

impl TestSummary {
    pub fn all_passed(&self) -> bool {
        self.failed == 0 && self.errors == 0 && self.passed > 0
    }
}

impl TestRun {
    /// Green: the command succeeded and nothing failed.
    pub fn green(&self) -> bool {
        self.status.success()
            && self
                .summary
                .as_ref()
                .is_none_or(|s| s.failed + s.errors == 0)
    }

    /// The observation text: counts, failing ids, then the tail of the output.
    pub fn render(&self, cap: usize) -> String {
        let code = match self.status {
            ExecStatus::Exited(c) => format!("exit code {c}"),
            ExecStatus::TimedOut => "timed out".into(),
            ExecStatus::Oom => "killed: out of memory".into(),
            ExecStatus::QuotaExceeded => "workspace quota full".into(),
        };
        let mut out = match &self.summary {
            Some(s) => {
                let mut t = format!(
                    "Tests: {} passed, {} failed, {} errors, {} skipped ({code}).\n",
                    s.passed, s.failed, s.errors, s.skipped
                );
                if !s.failing.is_empty() {
                    t.push_str(&format!("Failing: {}\n", s.failing.join(", ")));
                }
                t
            }
            None => format!("The test command produced no JUnit report ({code}).\n"),
        };
        if let Some(r) = crate::sandbox::pytest::runner_of(&self.output) {
            out.push_str(&format!("Test runner: pytest {r}\n"));
        }
        out.push_str("--- output ---\n");
        out.push_str(&truncate_text(
            &self.output,
            cap.saturating_sub(out.len()).max(1024),
        ));
        out
    }
}

impl TestSummary {
    /// Counts and failing ids from per-test outcomes (the verifier's reading, so the agent and
    /// the verdict agree on what a test did). A missing test counts as an error, as in the
    /// verdict: a test expected but not reported did not pass. Pure.
    pub fn from_outcomes(
        cases: impl IntoIterator<Item = (String, crate::verify::junit::TestOutcome)>,
    ) -> Self {
        use crate::verify::junit::TestOutcome;
        let mut s = TestSummary::default();
        for (id, outcome) in cases {
            match outcome {
                TestOutcome::Passed => s.passed += 1,
                TestOutcome::Skipped => s.skipped += 1,
                TestOutcome::Failed => {
                    s.failed += 1;
                    s.failing.push(id);
                }
                TestOutcome::Error | TestOutcome::Missing => {
                    s.errors += 1;
                    s.failing.push(id);
                }
            }
        }
        s
    }
}

/// Parse a pytest JUnit XML report through [`crate::verify::junit`] into counts and failing
/// node ids (`tests/test_x.py::TestK::name`, which `run_tests` accepts back). Pure.
pub fn summarize_junit(xml: &str) -> Option<TestSummary> {
    use crate::verify::junit;
    let run = junit::parse(xml).ok()?;
    // In report order (the first failing test is the one the task points at), each test once
    // with its merged outcome.
    let mut seen = std::collections::HashSet::new();
    let ordered: Vec<(String, junit::TestOutcome)> = junit::raw_cases(xml)
        .ok()?
        .iter()
        .map(|c| junit::key(&c.classname, &c.name))
        .filter(|k| seen.insert(k.clone()))
        .filter_map(|k| {
            let outcome = run.cases.get(&k)?.outcome;
            Some((junit::node_id_for_key(&k), outcome))
        })
        .collect();
    Some(TestSummary::from_outcomes(ordered))
}

/// POSIX single-quote a word for a shell command line.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// Run the configured test command (optionally on `tests`) with a JUnit report in /tmp.
///
/// Rust and Node images (`/opt/patchloop/kind`) run through the JUnit harness baked into the
/// image (`pl_junit.py`: cargo-nextest or libtest JUnit; jest with jest-junit) instead; for Node
/// the files of the given ids narrow the run, for Rust the whole suite runs.
pub async fn run_tests(
    sandbox: &dyn Sandbox,
    cfg: &ToolConfig,
    tests: &[String],
) -> Result<TestRun, SandboxError> {
    let nonce = format!("{:016x}", rand::random::<u64>());
    let xml = format!("/tmp/patchloop-junit-{nonce}.xml");
    let out_dir = format!("/tmp/patchloop-junit-{nonce}");
    let r = sandbox
        .exec(
            ExecRequest::shell(run_tests_script(&cfg.test_cmd, &xml, &out_dir, tests))
                .timeout(cfg.test_timeout)
                .output_cap(cfg.obs_cap * 4),
        )
        .await?;
    let read = sandbox
        .exec(
            ExecRequest::argv([
                "sh",
                "-c",
                "cat -- \"$1\" 2>/dev/null || cat -- \"$2/result.json\"; rm -rf -- \"$1\" \"$2\"",
                "sh",
                &xml,
                &out_dir,
            ])
            .output_cap(8 << 20),
        )
        .await?;
    let text = String::from_utf8_lossy(&read.output.kept_bytes()).into_owned();
    let summary = if text.trim_start().starts_with('{') {
        summarize_junit_result(&text)
    } else if !text.trim().is_empty() {
        summarize_junit(&text)
    } else {
        None
    };
    Ok(TestRun {
        status: r.status,
        summary,
        output: r.output.render(),
    })
}

/// The shell script of one `run_tests` call. Pure.
pub fn run_tests_script(
    test_cmd: &TestCommand,
    xml: &str,
    out_dir: &str,
    tests: &[String],
) -> String {
    use crate::sandbox::lang::{KIND_FILE, ProjectKind};
    use crate::verify::junit_run;
    let files: Vec<String> = tests
        .iter()
        .map(|t| crate::testid::file_of(t).to_string())
        .filter(|f| !f.is_empty())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let input = |kind: ProjectKind| {
        let files: &[String] = if matches!(kind, ProjectKind::Node | ProjectKind::Go) {
            &files
        } else {
            &[]
        };
        shell_quote(&junit_run::input_json(
            kind,
            crate::sandbox::WORKSPACE,
            out_dir,
            files,
        ))
    };
    // The test command, rendered from its typed value: pytest runs through the chooser the
    // verifier uses (the project's pytest when usable, else the harness's own), so the agent
    // and the verdict see the same runner; test ids are quoted.
    let options = [format!("--junitxml={xml}")];
    let python = test_cmd.shell(&Run {
        workspace: crate::sandbox::WORKSPACE,
        options: &options,
        selection: tests,
    });
    format!(
        "case \"$(cat {KIND_FILE} 2>/dev/null)\" in\n\
         rust) printf '%s' {rust} | python3 -I -B {script} ;;\n\
         node) printf '%s' {node} | python3 -I -B {script} ;;\n\
         go) printf '%s' {go} | python3 -I -B {script} ;;\n\
         *) {python} ;;\n\
         esac",
        rust = input(ProjectKind::Rust),
        node = input(ProjectKind::Node),
        go = input(ProjectKind::Go),
        script = junit_run::IN_IMAGE,
    )
}

/// Counts and failing ids from the JUnit harness's `result.json` (Rust/Node images). Pure.
pub fn summarize_junit_result(json: &str) -> Option<TestSummary> {
    use crate::sandbox::lang::ProjectKind;
    use crate::verify::junit_run::{self, JunitResult};
    let result: JunitResult = serde_json::from_str(json).ok()?;
    let kind = ProjectKind::parse(result.kind.as_deref().unwrap_or(""));
    let cases = junit_run::outcomes(kind, &result, crate::sandbox::WORKSPACE).ok()?;
    Some(TestSummary::from_outcomes(
        cases.into_iter().map(|(id, c)| (id, c.outcome)),
    ))
}
