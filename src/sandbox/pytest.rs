//! Which pytest runs a Python project's tests: one choice for the verifier's hardened run, the
//! agent's `run_tests` (and so the candidates' checks and the check after `submit`) and
//! prepare's collection check. `images/harness/pl_pytest.py` makes it: the project's pytest when
//! it imports and is at least 6.2, else the harness's own (`/opt/patchloop/harness-site`); its
//! first output line, `patchloop: pytest <project|harness> <version> (why)`, says which.
//!
//! The rendering of the repository's command through the chooser is
//! [`TestCommand::shell`](crate::testcmd::TestCommand::shell); here: collection, and reading the
//! chooser's line back.

use crate::testcmd::{Run, TestCommand};

/// The chooser's source (defines `choose_pytest` and `_pl_main`).
pub const PL_PYTEST: &str = crate::testcmd::PL_PYTEST;
/// The first line of the chooser's output.
pub const RUNNER_LINE: &str = "patchloop: pytest ";

/// The command that collects the tests of `tests_dirs` (`--collect-only`), rendered from the
/// repository's command.
pub fn collect_command(test_cmd: &TestCommand, tests_dirs: &[String]) -> String {
    let options = ["--collect-only", "-q", "-p", "no:cacheprovider"].map(String::from);
    test_cmd.shell(&Run {
        workspace: super::WORKSPACE,
        options: &options,
        selection: tests_dirs,
    })
}

/// The chooser's line in a run's output: `harness 7.2.1 (the project's pytest 3.0.7 is not
/// usable: ...)`.
pub fn runner_of(output: &str) -> Option<&str> {
    output
        .lines()
        .find_map(|l| l.trim_end().strip_prefix(RUNNER_LINE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_runner_line() {
        assert_eq!(
            runner_of("x\npatchloop: pytest harness 7.2.1 (why)\n"),
            Some("harness 7.2.1 (why)")
        );
        assert_eq!(runner_of("nothing"), None);
    }
}
