//! The hardened pytest invocation (docs/security.md, class I), as pure data: which Python, which paths,
//! which harness ini, which test ids. The scripts themselves live in `images/harness/` and are
//! sent to the container with each run (as `python3 -I -c` source and stdin JSON), so no file
//! the code under test could rewrite between runs is ever trusted.

use serde::{Deserialize, Serialize};

use crate::sandbox::WORKSPACE;
use crate::testcmd::{PythonSetup, TestCommand};

/// The run script: reads its JSON config from stdin, appends the workspace to `sys.path`,
/// loads the guard and calls `pytest.main`. pl_pytest.py, prepended, chooses the pytest the
/// same way `run_tests` does (`sandbox::pytest`).
pub const PL_RUN: &str = concat!(
    include_str!("../../images/harness/pl_pytest.py"),
    include_str!("../../images/harness/pl_run.py")
);
/// The guard plugin (checks pytest's internals at session end, records outcomes).
pub const PL_GUARD: &str = include_str!("../../images/harness/pl_guard.py");
/// Helper commands: `ini`, `snapshot`, `collect`, `put`, `find_spec`.
pub const PL_TOOL: &str = include_str!("../../images/harness/pl_tool.py");

/// The second, independent runner of the fail-to-pass tests (plain unittest or a direct call),
/// after pl_pytest.py for its seeded re-exec (the pytest runs it is compared with are seeded).
pub const PL_SECOND: &str = concat!(
    include_str!("../../images/harness/pl_pytest.py"),
    include_str!("../../images/harness/pl_second.py")
);

/// The pre-patch pytest configuration, as the harness will use it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HarnessConfig {
    /// A `[pytest]` ini: the repository's options minus `pythonpath`, cache and junit keys.
    pub ini_text: String,
    /// Which file it came from (`pyproject.toml`, …), if any.
    pub source: Option<String>,
    /// Absolute `pythonpath` entries: appended to `sys.path` (never prepended).
    #[serde(default)]
    pub pythonpath: Vec<String>,
    #[serde(default)]
    pub testpaths: Vec<String>,
}

/// Everything one hardened run needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunPlan {
    /// Appended to `sys.path` in this order (workspace first).
    pub paths: Vec<String>,
    pub ini_text: String,
    /// Extra pytest options carried over from the test command (`--import-mode`, `-p`, …).
    pub args: Vec<String>,
    /// Test ids or directories to run.
    pub selection: Vec<String>,
    /// Assignments from the test command (`CI=1`), set before any project code runs.
    pub env: Vec<(String, String)>,
}

/// Interpreter flags: isolated mode, no bytecode written. (A `pycache_prefix` would also keep
/// workspace `.pyc` files out, but it makes Python recompile pytest and the stdlib on every run,
/// ~1 s; the image holds no workspace bytecode, the policy rejects it in patches, and the
/// snapshot after each run flags any `.pyc` a run creates.)
pub const PYTHON_FLAGS: [&str; 3] = ["python3", "-I", "-B"];

impl RunPlan {
    pub fn argv(&self) -> Vec<String> {
        let mut v: Vec<String> = PYTHON_FLAGS.iter().map(|s| s.to_string()).collect();
        v.push("-c".into());
        v.push(PL_RUN.into());
        v
    }

    /// `nonce` marks this run's outcome-stream lines (`@@PATCHLOOP-T@@ <nonce> …`).
    pub fn stdin_json(&self, out_dir: &str, nonce: &str) -> String {
        let mut args = vec!["-q".to_string(), "--tb=short".to_string()];
        args.extend(self.args.iter().cloned());
        serde_json::json!({
            "workspace": WORKSPACE,
            "paths": self.paths,
            "ini_text": self.ini_text,
            "out_dir": out_dir,
            "guard_src": PL_GUARD,
            "args": args,
            "ids": self.selection,
            "env": self.env.iter().cloned().collect::<std::collections::BTreeMap<_, _>>(),
            "nonce": nonce,
        })
        .to_string()
    }

    /// What the receipt shows as "the command" (the script body elided).
    pub fn display_command(&self) -> Vec<String> {
        let mut v: Vec<String> = PYTHON_FLAGS.iter().map(|s| s.to_string()).collect();
        v.push("-c".into());
        v.push("<pl_run.py: sys.path += [".to_string() + &self.paths.join(", ") + "]>");
        v.extend(
            [
                "pytest",
                "-c",
                "<harness ini>",
                "--rootdir",
                WORKSPACE,
                "--confcutdir",
                WORKSPACE,
                "-p",
                "pl_guard",
                "-p",
                "no:cacheprovider",
                "--junitxml",
                "<harness path>",
            ]
            .map(String::from),
        );
        v.extend(self.args.iter().cloned());
        v.extend(self.selection.iter().cloned());
        v
    }
}

/// What the user's test command means for the hardened run (see
/// [`TestCommand::python_setup`]): `PYTHONPATH=…` assignments (which `-I` would ignore) become
/// appended paths, options that change how tests import are carried over, plain assignments
/// (`CI=1`) become the run's environment. Everything else in the command is deliberately
/// dropped: the harness runs its own pytest.
pub fn from_test_cmd(cmd: &TestCommand) -> PythonSetup {
    cmd.python_setup(WORKSPACE)
}

/// Build the run plan. With explicit pass-to-pass ids only the targets run; otherwise the whole
/// suite runs (test dirs, or the config's `testpaths`), plus any fail-to-pass id outside it.
pub fn plan(
    cfg: &HarnessConfig,
    test_cmd: &TestCommand,
    tests_dirs: &[String],
    fail_to_pass: &[String],
    pass_to_pass: &[String],
) -> RunPlan {
    let PythonSetup {
        paths: cmd_paths,
        args,
        env,
        ..
    } = from_test_cmd(test_cmd);
    let mut paths = vec![WORKSPACE.to_string()];
    for p in cmd_paths.into_iter().chain(cfg.pythonpath.iter().cloned()) {
        if !paths.contains(&p) {
            paths.push(p);
        }
    }
    let selection = if !pass_to_pass.is_empty() {
        fail_to_pass.iter().chain(pass_to_pass).cloned().collect()
    } else {
        let roots: Vec<String> = if !tests_dirs.is_empty() {
            tests_dirs.to_vec()
        } else {
            cfg.testpaths.clone()
        };
        let roots: Vec<String> = roots
            .into_iter()
            .map(|r| r.trim_matches('/').to_string())
            .filter(|r| !r.is_empty())
            .collect();
        let mut sel = roots.clone();
        for id in fail_to_pass {
            let file = crate::testid::file_of(id);
            let covered = roots.is_empty()
                || roots
                    .iter()
                    .any(|r| file == r || file.starts_with(&format!("{r}/")));
            if !covered {
                sel.push(id.clone());
            }
        }
        sel
    };
    RunPlan {
        paths,
        ini_text: if cfg.ini_text.is_empty() {
            "[pytest]\n".into()
        } else {
            cfg.ini_text.clone()
        },
        args,
        selection,
        env,
    }
}

/// Give every hunk body line a CRLF ending (for targets checked out with CRLF while the patch
/// has LF). Header lines keep LF so paths stay intact.
pub fn hunks_to_crlf(patch: &str) -> String {
    map_hunk_lines(patch, |_, body, nl| {
        format!("{body}{}", if nl { "\r\n" } else { "" })
    })
}

/// Drop trailing blanks from context and removed lines (whitespace drift introduced in transit;
/// `git apply --ignore-whitespace` does not forgive trailing whitespace in context).
pub fn strip_context_trailing_ws(patch: &str) -> String {
    map_hunk_lines(patch, |kind, body, nl| {
        let body = if kind == b'+' {
            body
        } else {
            body.trim_end_matches([' ', '\t'])
        };
        format!("{body}{}", if nl { "\n" } else { "" })
    })
}

/// Rewrite each hunk body line with `f(first byte, line without ending, had newline)`.
fn map_hunk_lines(patch: &str, f: impl Fn(u8, &str, bool) -> String) -> String {
    let mut out = String::with_capacity(patch.len() + patch.len() / 20);
    let (mut old_left, mut new_left) = (0usize, 0usize);
    for line in patch.split_inclusive('\n') {
        let nl = line.ends_with('\n');
        let body = line.strip_suffix('\n').unwrap_or(line);
        let body = body.strip_suffix('\r').unwrap_or(body);
        if old_left > 0 || new_left > 0 {
            let kind = body.as_bytes().first().copied().unwrap_or(b' ');
            match kind {
                b'+' => new_left = new_left.saturating_sub(1),
                b'-' => old_left = old_left.saturating_sub(1),
                b'\\' => {
                    out.push_str(line);
                    continue;
                }
                _ => {
                    old_left = old_left.saturating_sub(1);
                    new_left = new_left.saturating_sub(1);
                }
            }
            out.push_str(&f(kind, body, nl));
            continue;
        }
        if let Some((ol, nl)) = hunk_counts(body) {
            old_left = ol;
            new_left = nl;
        }
        out.push_str(line);
    }
    out
}

fn hunk_counts(line: &str) -> Option<(usize, usize)> {
    let rest = line.strip_prefix("@@ -")?;
    let end = rest.find(" @@")?;
    let mut parts = rest[..end].split(" +");
    let len = |s: &str| -> Option<usize> {
        match s.split_once(',') {
            Some((_, n)) => n.parse().ok(),
            None => Some(1),
        }
    };
    Some((len(parts.next()?)?, len(parts.next()?)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(s: &str) -> TestCommand {
        TestCommand::parse(s).unwrap()
    }

    #[test]
    fn pythonpath_from_the_test_command_is_appended() {
        let s = from_test_cmd(&cmd(
            "CI=1 PYTHONPATH=src:lib python -m pytest -p no:randomly --import-mode importlib -x tests",
        ));
        assert_eq!(s.paths, vec!["/workspace/src", "/workspace/lib"]);
        assert_eq!(s.args, vec!["-p", "no:randomly", "--import-mode=importlib"]);
        assert_eq!(s.env, vec![("CI".to_string(), "1".to_string())]);
        let s = from_test_cmd(&cmd("pytest"));
        assert!(s.paths.is_empty() && s.args.is_empty());
    }

    #[test]
    fn plan_runs_the_suite_or_the_targets() {
        let cfg = HarnessConfig {
            ini_text: "[pytest]\naddopts = -ra\n".into(),
            source: Some("pyproject.toml".into()),
            pythonpath: vec!["/workspace/src".into()],
            testpaths: vec!["tests".into()],
        };
        let f2p = vec![
            "tests/test_a.py::test_x".to_string(),
            "other/test_b.py::test_y".to_string(),
        ];
        let p = plan(
            &cfg,
            &cmd("PYTHONPATH=src pytest"),
            &["tests".into()],
            &f2p,
            &[],
        );
        assert_eq!(p.paths, vec!["/workspace", "/workspace/src"]);
        assert_eq!(p.selection, vec!["tests", "other/test_b.py::test_y"]);
        let p2p = vec!["tests/test_a.py::test_z".to_string()];
        let p = plan(&cfg, &cmd("pytest"), &[], &f2p[..1], &p2p);
        assert_eq!(
            p.selection,
            vec!["tests/test_a.py::test_x", "tests/test_a.py::test_z"]
        );
        // No tests dirs: the config's testpaths.
        let p = plan(&cfg, &cmd("pytest"), &[], &f2p[..1], &[]);
        assert_eq!(p.selection, vec!["tests"]);
        let json: serde_json::Value = serde_json::from_str(&p.stdin_json("/tmp/x", "n0")).unwrap();
        assert_eq!(json["out_dir"], "/tmp/x");
        assert!(
            json["guard_src"]
                .as_str()
                .unwrap()
                .contains("pytest_sessionfinish")
        );
        assert_eq!(p.argv()[..3], ["python3", "-I", "-B"]);
    }

    #[test]
    fn trailing_whitespace_is_dropped_from_context_only() {
        let p = "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a  \n-b\t\n+c \n";
        assert_eq!(
            strip_context_trailing_ws(p),
            "--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c \n"
        );
    }

    #[test]
    fn crlf_conversion_touches_only_hunk_bodies() {
        let p = "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n";
        assert_eq!(
            hunks_to_crlf(p),
            "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"
        );
    }
}
