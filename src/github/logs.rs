//! Failed-job logs → failing test ids and the test command (pure).
//!
//! GitHub job logs prefix every line with an ISO timestamp and wrap each step in
//! `##[group]Run <first script line>`, the script lines, a `shell:`/`env:` block and
//! `##[endgroup]`; the step's output follows, and a failed step ends with
//! `##[error]Process completed with exit code N.`. Test runners colour their output. Both the
//! timestamps and the colours are stripped first.
//!
//! The test command is chosen **by evidence**: the step whose *output* shows a test session
//! (pytest's session header or summary, `cargo test`'s `test result:`, nextest's summary,
//! jest/vitest summaries, `go test`'s `ok`/`FAIL` lines, unittest's `Ran N tests`) and that
//! failed, before a step that only shows a session; install steps are never taken. When the
//! session ran under tox, nox or make, the command is the one those tools echo (what actually
//! ran the tests), not the wrapper.

use std::sync::LazyLock;

use regex::Regex;

use crate::sandbox::ci::{is_install_cmd, is_test_cmd};
use crate::testcmd::TestCommand;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    Pytest,
    Cargo,
    Nextest,
    Jest,
    Vitest,
    Go,
    Unittest,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    pub framework: Option<Framework>,
    /// Failing test ids in the runner's own notation, in order of first appearance.
    pub failing_tests: Vec<String>,
    /// The command that ran the tests, when recognisable (parsed here, where it enters).
    pub test_cmd: Option<TestCommand>,
    /// `python-version` given to `actions/setup-python` in the job of the chosen step.
    pub python_version: Option<String>,
    /// Exit code of the chosen step, when the log shows it failed.
    pub exit_code: Option<i32>,
}

fn re(p: &str) -> Option<Regex> {
    Regex::new(p).ok()
}

static TIMESTAMP: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z ?"));
static ANSI: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"\x1b\[[0-9;?]*[A-Za-z]"));
static PYTEST_SUMMARY: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^(?:FAILED|ERROR) (\S+::\S+?)(?: - .*)?$"));
static PYTEST_VERBOSE: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^(\S+\.py::\S+) (?:FAILED|ERROR)\b"));
static CARGO_FAIL: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^test (\S+) \.\.\. FAILED$"));
static NEXTEST_FAIL: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^\s*FAIL \[\s*[\d.]+s\]\s+(?:\(\s*\d+/\d+\)\s+)?(\S+)\s+(\S+)\s*$"));
static JEST_BULLET: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^\s*● (.+?)\s*$"));
static JEST_FILE: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^\s*FAIL\s+(\S+\.\w+)\s*$"));
static VITEST_FAIL: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^\s*(?:FAIL|×|✗)\s+(\S+\.[cm]?[jt]sx?)\s+>\s+(.+?)(?:\s+\d+ms)?\s*$"));
static GO_FAIL: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^\s*--- FAIL: (\S+) \([\d.]+s\)\s*$"));

// Evidence that a step's output is a test session, by runner.
static EV_PYTEST: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(concat!(
        r"^=+ (?:test session starts|short test summary info)",
        r"|^=*\s*\d+ (?:passed|failed|errors?)\b.* in [\d.]+s(?: \([\d:]+\))?\s*=*$",
        r"|^(?:FAILED|ERROR) \S+::\S+",
    ))
});
static EV_CARGO: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^test result: (?:ok|FAILED)\. \d+ passed"));
static EV_NEXTEST: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^\s*Summary \[\s*[\d.]+s\] \d+ tests? run"));
static EV_JEST: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^Tests:\s+.*\d+ total\s*$|^Test Suites:\s+.*\d+ total\s*$"));
static EV_VITEST: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^\s*Test Files\s+.*\(\d+\)\s*$"));
static EV_GO: LazyLock<Option<Regex>> = LazyLock::new(|| {
    re(r"^(?:ok|FAIL)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[build failed\])|^--- FAIL: ")
});
static EV_UNITTEST: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^Ran \d+ tests? in [\d.]+s$"));

static EXIT: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^##\[error\]Process completed with exit code (\d+)"));
// What tox (4: `env: commands[0]> cmd`; 3: `env run-test: commands[0] | cmd`) and nox
// (`nox > cmd`) echo before running a command.
static TOX_CMD: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r"^\s*\S+(?: run-test)?: commands\[\d+\](?:>| \|) (.+?)\s*$"));
static NOX_CMD: LazyLock<Option<Regex>> = LazyLock::new(|| re(r"^nox > (.+?)\s*$"));
static PY_VERSION: LazyLock<Option<Regex>> =
    LazyLock::new(|| re(r#"^\s+python-version:\s*['"]?([0-9][0-9.]*[0-9x*]?)['"]?\s*$"#));

fn clean(line: &str) -> String {
    let l = match TIMESTAMP.as_ref() {
        Some(r) => r.replace(line, "").into_owned(),
        None => line.to_string(),
    };
    match ANSI.as_ref() {
        Some(r) => r.replace_all(&l, "").into_owned(),
        None => l,
    }
}

fn caps<'a>(re: &LazyLock<Option<Regex>>, s: &'a str) -> Option<regex::Captures<'a>> {
    re.as_ref().and_then(|r| r.captures(s))
}

fn is(re: &LazyLock<Option<Regex>>, s: &str) -> bool {
    re.as_ref().is_some_and(|r| r.is_match(s))
}

fn push_unique(v: &mut Vec<String>, s: String) {
    if !v.contains(&s) {
        v.push(s);
    }
}

fn framework_of_cmd(cmd: &str) -> Option<Framework> {
    let c = cmd.to_ascii_lowercase();
    if c.contains("nextest") {
        Some(Framework::Nextest)
    } else if c.contains("cargo test") {
        Some(Framework::Cargo)
    } else if c.contains("pytest") || c.contains("tox") || c.contains("nox") {
        Some(Framework::Pytest)
    } else if c.contains("vitest") {
        Some(Framework::Vitest)
    } else if c.contains("jest") || c.contains("npm test") || c.contains("yarn test") {
        Some(Framework::Jest)
    } else if c.contains("go test") {
        Some(Framework::Go)
    } else if c.contains("unittest") {
        Some(Framework::Unittest)
    } else {
        None
    }
}

/// The runner whose session this output line proves, if any.
fn evidence(line: &str) -> Option<Framework> {
    let t = line.trim_end();
    if is(&EV_PYTEST, t) {
        Some(Framework::Pytest)
    } else if is(&EV_NEXTEST, t) {
        Some(Framework::Nextest)
    } else if is(&EV_CARGO, t) {
        Some(Framework::Cargo)
    } else if is(&EV_VITEST, t) {
        Some(Framework::Vitest)
    } else if is(&EV_JEST, t) {
        Some(Framework::Jest)
    } else if is(&EV_GO, t) {
        Some(Framework::Go)
    } else if is(&EV_UNITTEST, t) {
        Some(Framework::Unittest)
    } else {
        None
    }
}

/// One `Run` step of a job log: its script (continuation lines joined) and its output.
#[derive(Debug, Default)]
struct Step {
    script: Vec<String>,
    output: Vec<String>,
    exit_code: Option<i32>,
    evidence: Option<Framework>,
    python_version: Option<String>,
}

/// Splits cleaned log lines into steps. Lines before the first `Run` (runner preamble) belong
/// to no step; a `##[group]` that is not a `Run` (an action's own grouping) stays in the step.
fn steps(lines: &[String]) -> Vec<Step> {
    // Lines before any step (or a log without step headers) still count for failing ids.
    let mut out: Vec<Step> = vec![Step::default()];
    let mut python_version: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        i += 1;
        if let Some(first) = line.strip_prefix("##[group]Run ") {
            let mut script: Vec<String> = Vec::new();
            // The group holds the script lines, then `shell:`, `env:`/`with:` blocks. A log
            // without the closing `##[endgroup]` (trimmed by hand) has only the header line.
            let end = lines[i..]
                .iter()
                .position(|l| {
                    l == "##[endgroup]"
                        || l.starts_with("##[group]Run ")
                        || l.starts_with("Current runner version:")
                })
                .map(|p| p + i)
                .filter(|&e| lines[e] == "##[endgroup]");
            if let Some(end) = end {
                let mut in_with = false;
                for l in &lines[i..end] {
                    if l.starts_with("shell: ") || l == "env:" || l == "with:" {
                        in_with = true;
                    }
                    if in_with {
                        if let Some(c) = caps(&PY_VERSION, l) {
                            python_version = Some(c[1].to_string());
                        }
                        continue;
                    }
                    match script.last_mut() {
                        Some(prev) if prev.ends_with('\\') => {
                            prev.pop();
                            prev.truncate(prev.trim_end().len());
                            prev.push(' ');
                            prev.push_str(l.trim());
                        }
                        _ => script.push(l.trim().to_string()),
                    }
                }
                i = end + 1;
            }
            script.retain(|s| !s.is_empty());
            if script.is_empty() {
                script.push(first.trim().to_string());
            }
            out.push(Step {
                script,
                python_version: python_version.clone(),
                ..Step::default()
            });
            continue;
        }
        // A new job's preamble: nothing of it belongs to the previous job's last step.
        if line.starts_with("Current runner version:") {
            python_version = None;
            out.push(Step::default());
            continue;
        }
        let Some(step) = out.last_mut() else {
            continue;
        };
        if let Some(c) = caps(&EXIT, line) {
            step.exit_code = c[1].parse().ok();
            continue;
        }
        if step.evidence.is_none() {
            step.evidence = evidence(line);
        }
        step.output.push(line.clone());
    }
    out
}

/// The parts of a script line: `a && b; c` runs three commands.
fn parts(line: &str) -> impl Iterator<Item = &str> {
    line.split("&&")
        .flat_map(|p| p.split(';'))
        .map(str::trim)
        .filter(|p| !p.is_empty())
}

/// The command that ran the tests in a step with a test session.
fn command_of(step: &Step) -> Option<String> {
    let script_cmd = step
        .script
        .iter()
        .flat_map(|l| parts(l))
        .find(|p| is_test_cmd(p))
        .map(str::to_string);
    // tox/nox/make echo the commands they run: take the one that ran the tests.
    let wrapper = script_cmd.as_deref().map(str::to_ascii_lowercase);
    let wrapper = wrapper.as_deref().unwrap_or("");
    let (tox, nox, make) = (
        wrapper.contains("tox"),
        wrapper.contains("nox"),
        wrapper.contains("make"),
    );
    if tox || nox || make {
        for l in &step.output {
            if evidence(l).is_some() {
                break;
            }
            let echoed = if tox {
                caps(&TOX_CMD, l).map(|c| c[1].to_string())
            } else if nox {
                caps(&NOX_CMD, l).map(|c| c[1].to_string())
            } else {
                // make prints each recipe line before running it.
                (!l.starts_with(' ') && !l.starts_with("make")).then(|| l.trim().to_string())
            };
            if let Some(e) = echoed
                && is_test_cmd(&e)
                && !e.contains("tox")
                && !e.contains("nox")
            {
                return Some(e);
            }
        }
    }
    script_cmd.or_else(|| {
        // A session ran, but under a command we don't know (`./ci/run-tests.sh`).
        step.script
            .iter()
            .flat_map(|l| parts(l))
            .filter(|p| !is_install_cmd(p))
            .last()
            .map(str::to_string)
    })
}

/// Extract from one or more concatenated job logs.
pub fn extract(log: &str) -> Extracted {
    let lines: Vec<String> = log.lines().map(clean).collect();
    let steps = steps(&lines);
    let mut out = Extracted::default();

    // The step by evidence: a failed test session, else any test session, else (no session in
    // the log) a failed step whose script runs tests, else any step whose script does.
    let chosen = steps
        .iter()
        .find(|s| s.evidence.is_some() && s.exit_code.is_some())
        .or_else(|| steps.iter().find(|s| s.evidence.is_some()))
        .map(|s| (s, command_of(s)))
        .or_else(|| {
            let scripted = |s: &&Step| {
                s.script
                    .iter()
                    .flat_map(|l| parts(l))
                    .find(|p| is_test_cmd(p))
                    .map(str::to_string)
            };
            steps
                .iter()
                .filter(|s| s.exit_code.is_some())
                .chain(steps.iter())
                .find_map(|s| scripted(&s).map(|c| (s, Some(c))))
        });
    let mut seen_fw: Option<Framework> = None;
    if let Some((step, cmd)) = chosen {
        seen_fw = step
            .evidence
            .or_else(|| cmd.as_deref().and_then(framework_of_cmd));
        out.test_cmd = cmd.and_then(|c| TestCommand::parse(&c).ok());
        out.python_version = step.python_version.clone();
        out.exit_code = step.exit_code;
    }

    // Failing ids: from every step's output (all failed jobs count).
    let mut in_cargo_failures = false;
    for line in steps.iter().flat_map(|s| s.output.iter()) {
        let t = line.trim_end();
        if let Some(c) = caps(&PYTEST_SUMMARY, t).or_else(|| caps(&PYTEST_VERBOSE, t)) {
            seen_fw.get_or_insert(Framework::Pytest);
            push_unique(&mut out.failing_tests, c[1].to_string());
            continue;
        }
        if let Some(c) = caps(&NEXTEST_FAIL, t) {
            seen_fw = Some(Framework::Nextest);
            push_unique(&mut out.failing_tests, c[2].to_string());
            continue;
        }
        if let Some(c) = caps(&CARGO_FAIL, t) {
            seen_fw.get_or_insert(Framework::Cargo);
            push_unique(&mut out.failing_tests, c[1].to_string());
            continue;
        }
        if let Some(c) = caps(&GO_FAIL, t) {
            seen_fw.get_or_insert(Framework::Go);
            push_unique(&mut out.failing_tests, c[1].to_string());
            continue;
        }
        if t == "failures:" {
            in_cargo_failures = true;
            continue;
        }
        if in_cargo_failures {
            let s = t.trim();
            if s.starts_with("test result:") || (s.is_empty() && !out.failing_tests.is_empty()) {
                in_cargo_failures = false;
            } else if t.starts_with("    ") && !s.contains(' ') && !s.is_empty() {
                push_unique(&mut out.failing_tests, s.to_string());
            }
            continue;
        }
        if let Some(c) = caps(&VITEST_FAIL, t) {
            seen_fw = Some(Framework::Vitest);
            push_unique(&mut out.failing_tests, format!("{} > {}", &c[1], &c[2]));
            continue;
        }
        if let Some(c) = caps(&JEST_BULLET, t) {
            // `● Console` is jest's console-output heading, not a test.
            if &c[1] != "Console" {
                seen_fw.get_or_insert(Framework::Jest);
                push_unique(&mut out.failing_tests, c[1].to_string());
            }
            continue;
        }
        if caps(&JEST_FILE, t).is_some() {
            seen_fw.get_or_insert(Framework::Jest);
        }
    }
    out.framework = seen_fw;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        let path = format!(
            "{}/tests/fixtures/ci-logs/{name}",
            env!("CARGO_MANIFEST_DIR")
        );
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
    }

    const PYTEST_IDS: [&str; 2] = [
        "tests/test_core.py::test_merge",
        "tests/test_utils.py::TestSplit::test_split[a,b-2]",
    ];

    #[test]
    fn fixtures_are_in_the_runner_format() {
        let ts = Regex::new(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{7}Z ").unwrap();
        for name in [
            "pytest-after-pip-install.log",
            "pytest-multiline-script.log",
            "tox-env.log",
            "make-test.log",
            "matrix-two-jobs.log",
            "nox-session.log",
            "cargo-test.log",
            "jest-npm-test.log",
            "vitest.log",
            "go-test.log",
            "install-failed.log",
        ] {
            let log = fixture(name);
            assert!(log.lines().all(|l| ts.is_match(l)), "{name}");
            assert!(log.contains("Z ##[group]Run "), "{name}");
            assert!(
                log.contains("##[error]Process completed with exit code"),
                "{name}"
            );
        }
    }

    #[test]
    fn the_pytest_step_not_the_pip_install_of_pytest() {
        let e = extract(&fixture("pytest-after-pip-install.log"));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("python -m pytest -q --cov=minilib tests")
        );
        assert_eq!(e.framework, Some(Framework::Pytest));
        assert_eq!(e.failing_tests, PYTEST_IDS);
        assert_eq!(e.python_version.as_deref(), Some("3.11"));
        assert_eq!(e.exit_code, Some(1));
    }

    #[test]
    fn multiline_script_takes_the_test_line_with_its_continuation() {
        let e = extract(&fixture("pytest-multiline-script.log"));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("PYTHONPATH=src pytest -ra --doctest-modules tests")
        );
        assert_eq!(e.failing_tests, PYTEST_IDS);
        assert_eq!(e.python_version.as_deref(), Some("3.12"));
    }

    #[test]
    fn tox_env_gives_the_command_tox_ran() {
        let e = extract(&fixture("tox-env.log"));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("pytest --doctest-modules boltons tests")
        );
        assert_eq!(e.framework, Some(Framework::Pytest));
        assert_eq!(e.failing_tests, PYTEST_IDS);
    }

    #[test]
    fn tox3_and_make_echo_lines() {
        let e = extract(&fixture("make-test.log"));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("python -m pytest -x -q tests")
        );
        assert_eq!(e.exit_code, Some(2));
        assert_eq!(e.python_version.as_deref(), Some("3.10"));
        let tox3 = "##[group]Run tox -e py39\ntox -e py39\nshell: /usr/bin/bash -e {0}\n##[endgroup]\n\
                    py39 installdeps: pytest\n\
                    py39 run-test: commands[0] | python -m pytest tests\n\
                    ============================= test session starts ==============================\n\
                    FAILED tests/t.py::x - assert 0\n\
                    ##[error]Process completed with exit code 1.\n";
        let e = extract(tox3);
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("python -m pytest tests")
        );
        assert_eq!(e.failing_tests, vec!["tests/t.py::x"]);
    }

    #[test]
    fn nox_session_gives_the_command_nox_ran() {
        let e = extract(&fixture("nox-session.log"));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("pytest -q tests")
        );
        assert_eq!(e.failing_tests, PYTEST_IDS);
    }

    #[test]
    fn matrix_takes_the_job_whose_tests_failed() {
        let e = extract(&fixture("matrix-two-jobs.log"));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("pytest tests/")
        );
        assert_eq!(e.python_version.as_deref(), Some("3.12"));
        assert_eq!(e.failing_tests, PYTEST_IDS);
    }

    #[test]
    fn a_failed_session_wins_over_a_passing_one() {
        let log = "##[group]Run pytest tests/unit\npytest tests/unit\nshell: bash\n##[endgroup]\n\
                   ============================= test session starts ==============================\n\
                   ============================== 3 passed in 0.02s ===============================\n\
                   ##[group]Run pytest tests/integration\npytest tests/integration\nshell: bash\n##[endgroup]\n\
                   ============================= test session starts ==============================\n\
                   FAILED tests/integration/t.py::x - boom\n\
                   ##[error]Process completed with exit code 1.\n";
        let e = extract(log);
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("pytest tests/integration")
        );
        assert_eq!(e.failing_tests, vec!["tests/integration/t.py::x"]);
    }

    #[test]
    fn only_an_install_failed_so_no_command() {
        let e = extract(&fixture("install-failed.log"));
        assert_eq!(e.test_cmd, None);
        assert!(e.failing_tests.is_empty());
        assert_eq!(e.framework, None);
    }

    #[test]
    fn unknown_script_that_ran_a_session() {
        let log = "##[group]Run pip install -e . && ./ci/run-tests.sh\npip install -e . && ./ci/run-tests.sh\nshell: bash\n##[endgroup]\n\
                   ============================= test session starts ==============================\n\
                   FAILED tests/t.py::x\n##[error]Process completed with exit code 1.\n";
        let e = extract(log);
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("./ci/run-tests.sh")
        );
    }

    #[test]
    fn cargo_from_the_runner_log() {
        let e = extract(&fixture("cargo-test.log"));
        assert_eq!(e.framework, Some(Framework::Cargo));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("cargo test --locked --all-features")
        );
        assert_eq!(e.failing_tests, vec!["math::subtracts"]);
        assert_eq!(e.exit_code, Some(101));
    }

    #[test]
    fn jest_vitest_go_from_runner_logs() {
        let e = extract(&fixture("jest-npm-test.log"));
        assert_eq!(e.framework, Some(Framework::Jest));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("npm test -- --ci")
        );
        assert_eq!(e.failing_tests, vec!["median › odd"]);
        let e = extract(&fixture("vitest.log"));
        assert_eq!(e.framework, Some(Framework::Vitest));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("pnpm exec vitest run")
        );
        assert_eq!(e.failing_tests, vec!["src/sum.test.ts > sum > adds"]);
        let e = extract(&fixture("go-test.log"));
        assert_eq!(e.framework, Some(Framework::Go));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("go test -race ./...")
        );
        assert_eq!(e.failing_tests, vec!["TestAdd", "TestSub/negative"]);
    }

    #[test]
    fn pytest_with_timestamps_and_colour() {
        let log = "2026-01-02T03:04:05.1234567Z ##[group]Run python -m pytest -q tests\n\
                   2026-01-02T03:04:05.1234567Z shell: /usr/bin/bash -e {0}\n\
                   2026-01-02T03:04:06.0000000Z \x1b[31mFAILED\x1b[0m tests/test_a.py::test_add - assert 1 == 2\n\
                   2026-01-02T03:04:06.0000000Z FAILED tests/test_a.py::TestX::test_p[1-2]\n\
                   2026-01-02T03:04:06.0000000Z FAILED tests/test_a.py::test_add - again\n";
        let e = extract(log);
        assert_eq!(e.framework, Some(Framework::Pytest));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("python -m pytest -q tests")
        );
        assert_eq!(
            e.failing_tests,
            vec![
                "tests/test_a.py::test_add",
                "tests/test_a.py::TestX::test_p[1-2]"
            ]
        );
    }

    #[test]
    fn pytest_verbose_and_multiline_script() {
        let log = "##[group]Run pip install -e .\npip install -e .\npytest -v\nshell: bash\n##[endgroup]\ntests/test_b.py::test_x FAILED                [ 50%]\n";
        let e = extract(log);
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("pytest -v")
        );
        assert_eq!(e.failing_tests, vec!["tests/test_b.py::test_x"]);
    }

    #[test]
    fn cargo_test() {
        let log = "##[group]Run cargo test --all\nrunning 2 tests\ntest math::adds ... ok\ntest math::subtracts ... FAILED\n\nfailures:\n\n---- math::subtracts stdout ----\npanicked\n\nfailures:\n    math::subtracts\n    math::other\n\ntest result: FAILED. 1 passed; 1 failed\n";
        let e = extract(log);
        assert_eq!(e.framework, Some(Framework::Cargo));
        assert_eq!(
            e.test_cmd.as_ref().map(TestCommand::as_str),
            Some("cargo test --all")
        );
        assert_eq!(e.failing_tests, vec!["math::subtracts", "math::other"]);
    }

    #[test]
    fn nextest() {
        let log = "##[group]Run cargo nextest run\n        PASS [   0.003s] mycrate tests::ok\n        FAIL [   0.004s] mycrate tests::broken\n";
        let e = extract(log);
        assert_eq!(e.framework, Some(Framework::Nextest));
        assert_eq!(e.failing_tests, vec!["tests::broken"]);
    }

    #[test]
    fn jest_and_vitest() {
        let jest =
            "##[group]Run npx jest\nFAIL src/sum.test.js\n  ● sum › adds numbers\n  ● Console\n";
        let e = extract(jest);
        assert_eq!(e.framework, Some(Framework::Jest));
        assert_eq!(e.failing_tests, vec!["sum › adds numbers"]);
        let vitest = "##[group]Run npx vitest run\n FAIL  src/sum.test.ts > sum > adds 3ms\n";
        let e = extract(vitest);
        assert_eq!(e.framework, Some(Framework::Vitest));
        assert_eq!(e.failing_tests, vec!["src/sum.test.ts > sum > adds"]);
    }

    #[test]
    fn nothing_recognisable() {
        let e = extract("##[group]Run make lint\nerror: lint failed\n");
        assert_eq!(e, Extracted::default());
    }
}
