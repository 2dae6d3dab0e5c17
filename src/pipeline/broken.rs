//! A test command that cannot run is a configuration error, not a bug to repair: when the
//! baseline run (the unmodified checkout, before any model call) ends with no test outcome —
//! the shell could not start it (exit 126/127), pytest refused its arguments or collected
//! nothing, or every test module failed to import because a module is missing — the repair
//! stops there (exit 2) with the command's own first error lines. A module of the code under
//! test that raises on import (a `NameError` at module level) is a bug like any other: the
//! traceback's last frame is in the repository's non-test code, and the repair goes on. Pure.

use crate::agent::tools::TestRun;
use crate::sandbox::ExecStatus;
use crate::testcmd::TestCommand;

/// Why the test command could not run, with what it printed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the test command cannot run: {why} — it ran no test on the unmodified checkout, so there is nothing to repair yet.\n  command: {command}\n  its first error lines:\n{lines}\n  fix the command (`--test-cmd`, or `test_command:` in .github/patchloop.yml) so that it runs the tests in a checkout with the dependencies installed; for an old checkout whose dependencies have released breaking versions since, `dependencies: {{ as_of: release }}` resolves them as of its release"
)]
pub struct BrokenCommand {
    /// The command as the repository wrote it, and what it runs.
    pub command: String,
    pub why: String,
    /// The first lines of its output that say what went wrong, indented.
    pub lines: String,
}

/// The lines of a failed run worth showing first: error lines, else the first lines.
fn first_error_lines(output: &str, max: usize) -> Vec<String> {
    let useful: Vec<&str> = output
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty() && !l.starts_with(crate::sandbox::pytest::RUNNER_LINE))
        .collect();
    let errorish = |l: &str| {
        let lower = l.to_ascii_lowercase();
        [
            "error",
            "not found",
            "no such file",
            "usage:",
            "unrecognized",
            "permission denied",
            "no tests ran",
            "no module named",
            "cannot",
        ]
        .iter()
        .any(|k| lower.contains(k))
    };
    let picked: Vec<&str> = useful
        .iter()
        .copied()
        .filter(|l| errorish(l))
        .take(max)
        .collect();
    let picked = if picked.is_empty() {
        useful.into_iter().take(max).collect()
    } else {
        picked
    };
    picked
        .into_iter()
        .map(|l| l.chars().take(300).collect())
        .collect()
}

/// Whether an error in the output was raised by the code under test: a traceback block whose
/// last frame before its `E   SomeError` line is a repository file that is not a test (and the
/// error is not a module that cannot be found).
fn raised_in_code_under_test(output: &str) -> bool {
    let mut last_frame: Option<String> = None;
    for line in output.lines() {
        if let Some((path, rest)) = line.split_once(".py:")
            && rest
                .split(':')
                .next()
                .is_some_and(|n| n.chars().all(|c| c.is_ascii_digit()) && !n.is_empty())
            && !line.starts_with(' ')
        {
            last_frame = Some(format!("{path}.py"));
            continue;
        }
        let t = line.trim_start();
        if let Some(err) = t.strip_prefix("E ") {
            let err = err.trim_start();
            let missing_module =
                err.starts_with("ModuleNotFoundError") || err.contains("No module named");
            if let Some(f) = last_frame.take()
                && !missing_module
                && !f.starts_with('/')
                && !crate::agent::context::is_test_path(&f)
            {
                return true;
            }
        }
    }
    false
}

/// The reproduction did not finish within the limit of one test run: no outcome says what
/// fails, and every later run would be cut the same way.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the tests did not finish within {limit_s} s on the unmodified checkout (the suite is slower than that in the sandbox, or a test hangs), so nothing says what fails.\n  command: {command}\n  raise `test_timeout_seconds` in .github/patchloop.yml (the action's `test-timeout-seconds` input) above the suite's time in the sandbox, or give a `test_command` that runs fewer tests{tail}"
)]
pub struct SuiteTimedOut {
    pub command: String,
    pub limit_s: u64,
    /// The last lines it printed, indented, after a newline (empty: nothing printed).
    pub tail: String,
}

/// `Some` when the reproduction `run` was cut at `limit` (see [`SuiteTimedOut`]).
pub fn timed_out(
    run: &TestRun,
    cmd: &TestCommand,
    limit: std::time::Duration,
) -> Option<SuiteTimedOut> {
    if run.status != ExecStatus::TimedOut {
        return None;
    }
    let last: Vec<String> = run
        .output
        .lines()
        .map(str::trim_end)
        .filter(|l| !l.trim().is_empty())
        .rev()
        .take(4)
        .map(|l| format!("    {}", l.chars().take(300).collect::<String>()))
        .collect();
    let tail = match last.is_empty() {
        true => String::new(),
        false => format!(
            "\n  its last lines:\n{}",
            last.into_iter().rev().collect::<Vec<_>>().join("\n")
        ),
    };
    Some(SuiteTimedOut {
        command: cmd.describe(),
        limit_s: limit.as_secs(),
        tail,
    })
}

/// `Some` when the baseline run shows the command cannot run (see the module docs).
pub fn check(run: &TestRun, cmd: &TestCommand) -> Option<BrokenCommand> {
    let outcomes = run
        .summary
        .as_ref()
        .map(|s| s.passed + s.failed + s.skipped)
        .unwrap_or(0);
    if outcomes > 0 {
        return None;
    }
    let why = match run.status {
        ExecStatus::Exited(127) => "the shell cannot find the command (exit 127)".to_string(),
        ExecStatus::Exited(126) => "the command is not executable (exit 126)".to_string(),
        ExecStatus::Exited(4) => "pytest refused its arguments (exit 4, usage error)".to_string(),
        ExecStatus::Exited(5) => "pytest collected no test (exit 5)".to_string(),
        ExecStatus::Exited(3) => "pytest stopped with an internal error (exit 3)".to_string(),
        _ if raised_in_code_under_test(&run.output) => return None,
        ExecStatus::Exited(0) => "it exited 0 without reporting any test".to_string(),
        ExecStatus::Exited(n) if run.output.contains("No module named") => format!(
            "a module cannot be found (exit {n}): what the command runs, or a package the tests import, is not installed or not on the path the command sets"
        ),
        ExecStatus::Exited(n) => format!("it ended (exit {n}) without a test outcome"),
        ExecStatus::TimedOut => return None,
        other => format!("it ended ({other:?}) without a test outcome"),
    };
    let lines = first_error_lines(&run.output, 8)
        .into_iter()
        .map(|l| format!("    {l}"))
        .collect::<Vec<_>>()
        .join("\n");
    Some(BrokenCommand {
        command: cmd.describe(),
        why,
        lines: if lines.is_empty() {
            "    (it printed nothing)".into()
        } else {
            lines
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::tools::TestSummary;

    fn run(status: i64, summary: Option<(usize, usize, usize, usize)>, output: &str) -> TestRun {
        TestRun {
            status: ExecStatus::Exited(status),
            summary: summary.map(|(passed, failed, errors, skipped)| TestSummary {
                passed,
                failed,
                errors,
                skipped,
                failing: Vec::new(),
            }),
            output: output.to_string(),
        }
    }

    fn cmd() -> TestCommand {
        TestCommand::parse("PYTHONPATH=src python3 -m pytest -q tests").unwrap()
    }

    #[test]
    fn a_reproduction_cut_at_the_limit_is_told_with_the_limit_the_key_and_its_last_lines() {
        let mut cut = run(0, None, "collected 3 items\n\ntests/test_slow.py .");
        cut.status = ExecStatus::TimedOut;
        let t = timed_out(&cut, &cmd(), std::time::Duration::from_secs(12)).unwrap();
        let msg = t.to_string();
        assert!(msg.contains("did not finish within 12 s"), "{msg}");
        assert!(msg.contains("`test_timeout_seconds`"), "{msg}");
        assert!(msg.contains("    tests/test_slow.py ."), "{msg}");
        assert!(msg.contains("PYTHONPATH=src"), "{msg}");
        // A run that ended on its own is not cut, whatever it printed.
        let ended = run(1, Some((2, 1, 0, 0)), "1 failed, 2 passed");
        assert_eq!(
            timed_out(&ended, &cmd(), std::time::Duration::from_secs(12)),
            None
        );
    }

    #[test]
    fn a_command_the_shell_cannot_start_is_broken() {
        let b = check(
            &run(127, None, "sh: 1: PYTHONPATH=src: not found\n"),
            &cmd(),
        )
        .unwrap();
        assert!(b.why.contains("exit 127"), "{b:?}");
        assert!(b.lines.contains("PYTHONPATH=src: not found"));
        let text = b.to_string();
        assert!(
            text.contains("PYTHONPATH=src python3 -m pytest -q tests"),
            "{text}"
        );
        assert!(text.contains("--test-cmd"), "{text}");
    }

    #[test]
    fn usage_errors_empty_suites_and_missing_packages_are_broken() {
        assert!(
            check(
                &run(
                    4,
                    None,
                    "ERROR: usage: pytest [options]\npytest: error: unrecognized arguments: --cov\n"
                ),
                &cmd()
            )
            .unwrap()
            .lines
            .contains("unrecognized arguments")
        );
        assert!(
            check(
                &run(5, Some((0, 0, 0, 0)), "no tests ran in 0.01s\n"),
                &cmd()
            )
            .is_some()
        );
        let missing = "ImportError while importing test module '/workspace/tests/test_x.py'.\nTraceback:\n/usr/lib/python3.11/importlib/__init__.py:126: in import_module\n    return _bootstrap._gcd_import(name[level:], package, level)\ntests/test_x.py:1: in <module>\n    from mylib import f\nE   ModuleNotFoundError: No module named 'mylib'\n";
        let b = check(&run(2, Some((0, 0, 1, 0)), missing), &cmd()).unwrap();
        assert!(b.why.contains("cannot be found"), "{b:?}");
        assert!(b.lines.contains("No module named 'mylib'"), "{b:?}");
    }

    #[test]
    fn code_under_test_that_raises_on_import_is_a_bug_to_repair() {
        let raised = "tests/test_x.py:1: in <module>\n    from mylib import f\nmylib/__init__.py:3: in <module>\n    x = undefined_name\nE   NameError: name 'undefined_name' is not defined\n";
        assert_eq!(check(&run(2, Some((0, 0, 1, 0)), raised), &cmd()), None);
        // Any test outcome: the command runs.
        assert_eq!(check(&run(1, Some((3, 1, 0, 0)), "1 failed"), &cmd()), None);
        assert_eq!(
            check(&run(1, Some((0, 0, 0, 2)), "2 skipped"), &cmd()),
            None
        );
    }
}
