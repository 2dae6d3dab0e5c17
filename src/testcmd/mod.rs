//! The repository's test command as one typed value.
//!
//! A test command enters patchloop as text in five places (the `--test-cmd` flag, the
//! `test_command:` config key, a workflow step, a CI log, a bench task) and is parsed there,
//! once, into a [`TestCommand`]: the working directory (`cd sub && …`), environment
//! assignments (`PYTHONPATH=src …`, `env CI=1 …`), the launcher (`python -m pytest`, `pytest`,
//! `tox -e`, `nox -s`, `make`, `uv run`/`poetry run`/`hatch run`/`pdm run`, `coverage run`) and
//! its arguments, each word kept as the repository wrote it. What a delegating launcher runs
//! (a tox env's `commands`, a Makefile recipe, a hatch script) is filled in by
//! `sandbox::ci::resolve`, which reads the repository's files.
//!
//! Every consumer renders its own invocation from the value ([`TestCommand::shell`] for the
//! agent's `run_tests`, collection, hidden checks and bench runs; [`TestCommand::python_setup`]
//! for the verifier's hardened run, the tracer and the probe); none parses a shell string
//! again. A form this module does not understand is [`Launcher::Shell`]: it is run as written,
//! through `sh -c`, never taken apart.

pub mod pytest_args;
pub mod words;

use serde::{Deserialize, Serialize};

pub use words::Word;
use words::{Token, quote, quote_if_needed, tokenize};

/// The chooser (`images/harness/pl_pytest.py`): runs the project's pytest when it imports and
/// is new enough, else the harness's own; its first output line says which.
pub const PL_PYTEST: &str = include_str!("../../images/harness/pl_pytest.py");

/// `uv run`/`uvx` options that change what is installed beside the project.
const UV_INSTALL_OPTIONS: &[&str] = &[
    "--with",
    "--with-requirements",
    "--with-editable",
    "--extra",
    "--all-extras",
    "--no-extra",
    "--group",
    "--all-groups",
    "--only-group",
    "--no-group",
    "--dev",
    "--no-dev",
    "--only-dev",
    "--no-default-groups",
];

/// What runs the tests.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Launcher {
    /// pytest: `python -m pytest` (`interpreter` = the Python and its options), the `pytest` /
    /// `py.test` script, or `coverage run -m pytest` (`interpreter` empty: `python`).
    Pytest { interpreter: Vec<Word> },
    /// Another Python program: `python -m unittest`, `python setup.py test`, `python runtests.py`.
    Python,
    /// `tox` (`tox -e py311`, `python -m tox`).
    Tox,
    /// `nox` (`nox -s tests`).
    Nox,
    /// `make test`.
    Make,
    /// `just test` (a justfile recipe).
    Just,
    /// A script of the repository (`./ci.sh`, `bash scripts/test.sh`): what it runs is read
    /// from it (`sandbox::ci_resolve`).
    Script { path: String },
    /// A tool that runs a command in its own environment (`uv run`, `poetry run`, `hatch run`,
    /// `pdm run`, `pipenv run`, `rye run`, `hatch test`): the sandbox's image already is that
    /// environment, so what it runs is run directly.
    EnvRunner { tool: String },
    /// Not understood: run as written through `sh -c`.
    Shell,
}

/// The repository's test command (see the module docs).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCommand {
    /// The command as the repository wrote it.
    pub written: String,
    /// `cd DIR && …`: checkout-relative, normalised (`None`: the checkout root).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// The repository's script creates `cwd` before it changes into it (`mkdir empty; cd
    /// empty; pytest --pyargs pkg`: a scratch directory, so the installed package is tested, not
    /// the checkout's files): the rendering creates it too.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub makes_cwd: bool,
    /// Assignments before the command (`K=V …`, `env K=V …`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<(String, Word)>,
    /// The command's words after `cd` and the assignments (empty for [`Launcher::Shell`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argv: Vec<Word>,
    pub launcher: Launcher,
    /// `argv[args_at..]` are the launcher's arguments (pytest's, tox's, the runner's command).
    #[serde(default)]
    pub args_at: usize,
    /// What a delegating launcher runs, when known: an env runner's command, a tox env's or nox
    /// session's test command, a Makefile recipe, a hatch/pdm script.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub runs: Option<Box<TestCommand>>,
    /// Where `runs` was read from (`tox.ini [testenv:py311]`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub via: Option<String>,
}

/// A test command that cannot be used at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TestCommandError {
    #[error("the test command is empty")]
    Empty,
    #[error("the test command must be one line (it contains a control character)")]
    NotOneLine,
}

/// What a rendering adds to the repository's command.
#[derive(Debug, Clone, Default)]
pub struct Run<'a> {
    /// The sandbox's workspace (the checkout's root in the container).
    pub workspace: &'a str,
    /// pytest options this consumer adds (plain values; quoted here).
    pub options: &'a [String],
    /// Test ids or paths to run instead of the command's own positional paths
    /// (checkout-relative). Empty: the command's own.
    pub selection: &'a [String],
}

/// The flattened view of a command and what it runs: the directory, the assignments of every
/// level (outer first), and the innermost command.
struct Flat<'a> {
    cwd: Option<String>,
    /// Some level's script creates the directory (`TestCommand::makes_cwd`).
    makes_cwd: bool,
    env: Vec<&'a (String, Word)>,
    last: &'a TestCommand,
    /// The delegations followed, outermost first (`tox.ini [testenv]`).
    via: Vec<String>,
}

/// What the verifier's hardened run, the tracer and the probe take from the command: they run
/// pytest themselves (`python3 -I`), so only what changes how tests import is carried.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PythonSetup {
    /// `PYTHONPATH` entries, absolute, in order (appended to `sys.path`: `-I` ignores the
    /// variable).
    pub paths: Vec<String>,
    /// pytest options that change how tests import or which plugins load.
    pub args: Vec<String>,
    /// Other assignments with a known value, minus those that would steer the interpreter,
    /// pytest or the loader (`PYTHON*`, `PYTEST*`, `LD_*`, `PATH`, `HOME`, …).
    pub env: Vec<(String, String)>,
    /// The working directory, absolute, when the command changes it.
    pub cwd: Option<String>,
}

const PYTHON_MODULE_LAUNCHERS: &[&str] = &[
    "pytest",
    "py.test",
    "tox",
    "nox",
    "coverage",
    "unittest",
    "zope.testrunner",
    "testtools.run",
    "subunit.run",
    "green",
    "twisted.trial",
    "nose2",
];

/// Runners that take unittest's arguments (`discover`, dotted names): unittest itself and the
/// `TestProgram`s built on it.
const UNITTEST_LIKE: &[&str] = &["unittest", "testtools.run", "subunit.run"];
/// Third-party runners of unittest's test cases that take dotted names of packages or modules
/// and discover `test*.py` under a package (green, Twisted's trial, nose2), as console scripts
/// or `python -m` modules.
const DISCOVERING: &[&str] = &["green", "twisted.trial", "trial", "nose2"];
const ENV_RUNNERS: &[&str] = &[
    "uv", "uvx", "poetry", "hatch", "pdm", "pipenv", "rye", "pipx",
];

impl TestCommand {
    /// Parses a command line (see the module docs). Only an empty or multi-line command is an
    /// error; anything not understood is kept as [`Launcher::Shell`].
    pub fn parse(text: &str) -> Result<TestCommand, TestCommandError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(TestCommandError::Empty);
        }
        if text.chars().any(char::is_control) {
            return Err(TestCommandError::NotOneLine);
        }
        Ok(parse_line(text).unwrap_or_else(|| TestCommand::shell_only(text)))
    }

    /// [`TestCommand::parse`] for a command-line flag (clap's `value_parser`).
    pub fn from_flag(text: &str) -> Result<TestCommand, String> {
        TestCommand::parse(text).map_err(|e| format!("{e}; give the command the way CI runs the tests, e.g. `PYTHONPATH=src python -m pytest -q tests`"))
    }

    /// The default for a Python project: `python -m pytest`.
    pub fn python_pytest() -> TestCommand {
        parse_line("python -m pytest")
            .unwrap_or_else(|| TestCommand::shell_only("python -m pytest"))
    }

    /// A command kept as written.
    pub fn shell_only(text: &str) -> TestCommand {
        TestCommand {
            written: text.to_string(),
            cwd: None,
            makes_cwd: false,
            env: Vec::new(),
            argv: Vec::new(),
            launcher: Launcher::Shell,
            args_at: 0,
            runs: None,
            via: None,
        }
    }

    /// The command with assignments added in front (`PYTHONPATH=src` CI sets for the job).
    pub fn with_env(mut self, name: &str, value: &str) -> TestCommand {
        let w = Word::lit(value);
        self.written = format!("{name}={} {}", w.raw, self.written);
        self.env.insert(0, (name.to_string(), w));
        self
    }

    /// The launcher's arguments.
    pub fn args(&self) -> &[Word] {
        self.argv.get(self.args_at..).unwrap_or(&[])
    }

    /// The command as written.
    pub fn as_str(&self) -> &str {
        &self.written
    }

    /// Whether what finally runs is pytest (so a selection of test ids can be given).
    pub fn runs_pytest(&self) -> bool {
        matches!(self.flat().last.launcher, Launcher::Pytest { .. })
    }

    /// The same command with the arguments of the pytest it finally runs dropped: a check that
    /// is not one of the project's tests (a hidden check, in its own rootdir) runs without the
    /// suite's options (`--hypothesis-profile=slow-tests` names a profile only the project's
    /// conftest registers). The directory, assignments and interpreter stay.
    pub fn without_pytest_args(&self) -> TestCommand {
        let mut c = self.clone();
        let at = c.innermost_mut();
        if matches!(at.launcher, Launcher::Pytest { .. }) {
            at.argv.truncate(at.args_at);
        }
        c
    }

    /// The command with each path the pytest it finally runs is given that names nothing in
    /// the checkout but is a module there (`X` where `X.py` exists) given as that module:
    /// `unittest discover -s test` where `test` is `test.py` discovers from the module's
    /// directory (pyotp's sdist), and pytest would stop at "file or directory not found".
    /// A path read from a unittest dotted name that names an object inside a module
    /// (`tests.test_suite` → `tests/test_suite.py`, a function of `tests/__init__.py`) is given
    /// as the nearest module or package holding it. `exists` answers for checkout-relative
    /// paths (files and directories). Returns each path changed, with what it became.
    pub fn with_module_paths(
        &self,
        exists: impl Fn(&str) -> bool,
    ) -> (TestCommand, Vec<(String, String)>) {
        let mut c = self.clone();
        let cwd = self.flat().cwd;
        let mut changed = Vec::new();
        let at = c.innermost_mut();
        if !matches!(at.launcher, Launcher::Pytest { .. }) {
            return (c, changed);
        }
        let from = at.args_at.min(at.argv.len());
        let paths: Vec<Word> = pytest_args::split(&at.argv[from..])
            .into_iter()
            .filter_map(|a| match a {
                pytest_args::Arg::Path(w) => Some(w),
                pytest_args::Arg::Opt(_) => None,
            })
            .collect();
        for w in paths {
            let Some(v) = w.value.as_deref() else {
                continue;
            };
            // Absolute paths, test ids (`file.py::test`) and globs are not start directories.
            if v.is_empty() || v.starts_with('/') || v.contains(':') || v.contains(['*', '?']) {
                continue;
            }
            let v = v.trim_start_matches("./").trim_end_matches('/');
            let rel = match &cwd {
                Some(d) => format!("{d}/{v}"),
                None => v.to_string(),
            };
            let found = if exists(&rel) {
                None
            } else if exists(&format!("{rel}.py")) {
                Some(format!("{v}.py"))
            } else {
                // A unittest dotted name read as a path (`tests.test_suite` → `tests/test_suite.py`)
                // names an object inside a module or package: the nearest module or package
                // that holds it (`tests`, whose `__init__.py` defines `test_suite`).
                let stem = v.strip_suffix(".py").unwrap_or(v);
                let parts: Vec<&str> = stem.split('/').collect();
                (1..parts.len()).rev().find_map(|n| {
                    let p = parts[..n].join("/");
                    let r = match &cwd {
                        Some(d) => format!("{d}/{p}"),
                        None => p.clone(),
                    };
                    if exists(&format!("{r}.py")) {
                        Some(format!("{p}.py"))
                    } else if exists(&format!("{r}/__init__.py")) {
                        Some(p)
                    } else {
                        None
                    }
                })
            };
            if let Some(new) = found {
                if let Some(slot) = at.argv[from..].iter_mut().find(|x| x.raw == w.raw) {
                    *slot = Word::lit(&new);
                }
                changed.push((v.to_string(), new));
            }
        }
        if !changed.is_empty() {
            at.written = raw_join(&at.argv);
        }
        (c, changed)
    }

    /// Whether the command names the environment it runs in: a tox env, label or factor
    /// (`-e`, `-m`, `-f`), a nox session or tag (`-s`, `-t`), or what `uv run` installs
    /// (`--with`, `--extra`, `--group`, …).
    pub fn names_its_environment(&self) -> bool {
        let Some(outer) = self.levels().next() else {
            return false;
        };
        let args: Vec<&str> = outer.args().iter().map(|w| w.text()).collect();
        let flag = |names: &[&str]| {
            args.iter().any(|a| {
                names.iter().any(|n| {
                    a == n || (a.starts_with(n) && (n.len() == 2 || a[n.len()..].starts_with('=')))
                })
            })
        };
        match &outer.launcher {
            Launcher::Tox => flag(&["-e", "--envlist", "-m", "-f"]),
            Launcher::Nox => flag(&["-s", "--session", "--sessions", "-t", "--tags", "-e"]),
            // `uv run` options that change what is installed beside the project. A bare
            // `pdm run`/`poetry run` says no more than CI's reading of the job does (its install
            // line and lock), which the given line alone would lose.
            Launcher::EnvRunner { tool } if tool.starts_with("uv") => outer.argv
                [..outer.args_at.min(outer.argv.len())]
                .iter()
                .any(|w| {
                    let t = w.text();
                    UV_INSTALL_OPTIONS
                        .iter()
                        .any(|o| t == *o || t.strip_prefix(o).is_some_and(|r| r.starts_with('=')))
                }),
            _ => false,
        }
    }

    /// The checkout-relative script a Python launcher runs (`python tests/test.py -v`,
    /// `coverage run --source=pkg tests.py`): a `.py` path where its arguments start.
    pub fn python_script(&self) -> Option<&str> {
        if self.launcher != Launcher::Python {
            return None;
        }
        let v = self.argv.get(self.args_at)?.value.as_deref()?;
        (v.ends_with(".py") && !v.starts_with('-') && !v.starts_with('/')).then_some(v)
    }

    /// The module of `python [flags] -m MODULE …` run as [`Launcher::Python`] (a module that is
    /// not a known test launcher: `python -m tests`).
    pub fn python_module(&self) -> Option<&str> {
        if self.launcher != Launcher::Python || !is_module_flag(self.argv.get(self.args_at)?.text())
        {
            return None;
        }
        self.argv.get(self.args_at + 1)?.value.as_deref()
    }

    /// This command and what it runs, level by level, outermost first.
    pub fn levels(&self) -> impl Iterator<Item = &TestCommand> {
        std::iter::successors(Some(self), |c| c.runs.as_deref())
    }

    /// The level that finally runs (the command itself when it delegates to nothing known).
    pub fn innermost_mut(&mut self) -> &mut TestCommand {
        match self.runs {
            Some(ref mut next) => next.innermost_mut(),
            None => self,
        }
    }

    /// Whether the launcher delegates to a command read from the repository's files that is
    /// not known yet (`tox` without a readable tox.ini, a hatch script not found).
    pub fn unresolved(&self) -> bool {
        let last = self.flat().last;
        matches!(
            last.launcher,
            Launcher::Tox
                | Launcher::Nox
                | Launcher::Make
                | Launcher::Just
                | Launcher::EnvRunner { .. }
        ) && last.runs.is_none()
    }

    /// One line for people: the command, and what it runs when that was resolved.
    pub fn describe(&self) -> String {
        let f = self.flat();
        if std::ptr::eq(f.last, self) {
            return format!("`{}`", self.written);
        }
        let via = if f.via.is_empty() {
            String::new()
        } else {
            format!(" ({})", f.via.join(", "))
        };
        format!("`{}`, which runs `{}`{via}", self.written, f.last.written)
    }

    fn flat(&self) -> Flat<'_> {
        let mut f = Flat {
            cwd: None,
            makes_cwd: false,
            env: Vec::new(),
            last: self,
            via: Vec::new(),
        };
        let mut at = self;
        loop {
            f.cwd = join_dir(f.cwd.take(), at.cwd.as_deref());
            f.makes_cwd |= at.makes_cwd && at.cwd.is_some();
            f.env.extend(at.env.iter());
            f.last = at;
            match &at.runs {
                Some(next) => {
                    if let Some(v) = &at.via {
                        f.via.push(v.clone());
                    }
                    at = next;
                }
                None => break,
            }
        }
        f
    }

    /// The shell line that runs the tests in the sandbox the way the repository does: from its
    /// directory, with its assignments, pytest through the chooser (the project's pytest when
    /// usable, else the harness's) with the command's options minus reporting-only ones
    /// ([`pytest_args::reporting_only`]), then `run`'s options and selection (the command's own
    /// paths when the selection is empty). A command that does not finally run pytest is run
    /// as written; `run`'s options reach pytest, should it run, through `PYTEST_ADDOPTS`, and
    /// the selection cannot be given.
    pub fn shell(&self, run: &Run) -> String {
        let f = self.flat();
        let mut out = String::new();
        if let Some(d) = &f.cwd {
            if f.makes_cwd {
                out.push_str(&format!("mkdir -p {} && ", quote(d)));
            }
            out.push_str(&format!("cd {} && ", quote(d)));
        }
        for (k, v) in &f.env {
            out.push_str(&format!("{k}={} ", v.raw));
        }
        let last = f.last;
        let Launcher::Pytest { interpreter } = &last.launcher else {
            if !run.options.is_empty() {
                out.push_str(&format!(
                    "PYTEST_ADDOPTS={} ",
                    quote(&run.options.join(" "))
                ));
            }
            if last.launcher == Launcher::Shell || last.argv.is_empty() {
                out.push_str(&format!("sh -c {}", quote(&last.written)));
            } else {
                out.push_str(&raw_join(&last.argv));
            }
            return out;
        };
        let python = match interpreter.as_slice() {
            [] => "python".to_string(),
            words => raw_join(words),
        };
        // `python -m pytest` puts the working directory on sys.path; the `pytest` script
        // does not.
        let module = !interpreter.is_empty();
        let src = format!(
            "{PL_PYTEST}\n_pl_main(cwd_on_path={})\n",
            if module { "True" } else { "False" }
        );
        out.push_str(&format!("{python} -c {}", quote(&src)));
        for a in pytest_args::split(last.args()) {
            match a {
                pytest_args::Arg::Opt(ws) => {
                    if !pytest_args::reporting_only(pytest_args::name(&ws)) {
                        out.push(' ');
                        out.push_str(&raw_join(&ws));
                    }
                }
                pytest_args::Arg::Path(w) if run.selection.is_empty() => {
                    out.push(' ');
                    out.push_str(&w.raw);
                }
                pytest_args::Arg::Path(_) => {}
            }
        }
        if f.cwd.is_some() {
            // Ids are checkout-relative: reported and selected from the checkout's root.
            out.push_str(&format!(" --rootdir={}", quote_if_needed(run.workspace)));
        }
        for o in run.options {
            out.push(' ');
            out.push_str(&quote_if_needed(o));
        }
        for id in run.selection {
            out.push(' ');
            match &f.cwd {
                Some(_) if !id.starts_with('/') => out.push_str(&quote_if_needed(&format!(
                    "{}/{id}",
                    run.workspace.trim_end_matches('/')
                ))),
                _ => out.push_str(&quote_if_needed(id)),
            }
        }
        out
    }

    /// What the verifier's own pytest run takes from the command (see [`PythonSetup`]).
    pub fn python_setup(&self, workspace: &str) -> PythonSetup {
        let f = self.flat();
        let ws = workspace.trim_end_matches('/');
        let base = match &f.cwd {
            Some(d) => format!("{ws}/{d}"),
            None => ws.to_string(),
        };
        let mut s = PythonSetup {
            cwd: f.cwd.as_ref().map(|_| base.clone()),
            ..PythonSetup::default()
        };
        for (k, v) in &f.env {
            if k == "PYTHONPATH" {
                for d in pythonpath_dirs(v.value.as_deref().unwrap_or(&v.raw)) {
                    let abs = if d == "." {
                        base.clone()
                    } else {
                        format!("{base}/{d}")
                    };
                    if !s.paths.contains(&abs) {
                        s.paths.push(abs);
                    }
                }
            } else if let Some(val) = &v.value
                && !steers_the_runner(k)
            {
                s.env.push((k.clone(), val.clone()));
            }
        }
        if matches!(f.last.launcher, Launcher::Pytest { .. }) {
            s.args = pytest_args::carried(&pytest_args::split(f.last.args()));
        }
        s
    }
}

impl std::fmt::Display for TestCommand {
    /// The command as written.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.written)
    }
}

/// Assignments the verifier never takes from a command: they steer the interpreter, pytest,
/// the dynamic loader or the shell rather than the code under test.
fn steers_the_runner(name: &str) -> bool {
    name.starts_with("PYTHON")
        || name.starts_with("PYTEST")
        || name.starts_with("LD_")
        || matches!(
            name,
            "PATH" | "HOME" | "USER" | "SHELL" | "PWD" | "IFS" | "ENV" | "BASH_ENV" | "TMPDIR"
        )
}

fn raw_join(ws: &[Word]) -> String {
    ws.iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `a` then `b` as one checkout-relative directory (`None`: the root).
fn join_dir(a: Option<String>, b: Option<&str>) -> Option<String> {
    match (a, b) {
        (a, None) => a,
        (None, Some(b)) => Some(b.to_string()),
        (Some(a), Some(b)) => Some(format!("{a}/{b}")),
    }
}

/// `src:.` / `${{ github.workspace }}/src` / `{toxinidir}/src` / `$PWD/lib` → checkout-relative
/// directories (`.` for the root); entries that only a shell could know (`$PYTHONPATH`) and
/// ones outside the checkout are left out.
pub fn pythonpath_dirs(s: &str) -> Vec<String> {
    s.split([':', ';'])
        .map(|p| {
            let p = p.trim().trim_matches(['"', '\'']);
            let p = [
                "${{ github.workspace }}",
                "{toxinidir}",
                "$GITHUB_WORKSPACE",
                "${GITHUB_WORKSPACE}",
                "$PWD",
                "${PWD}",
                "$(pwd)",
            ]
            .iter()
            .find_map(|pre| p.strip_prefix(pre))
            .unwrap_or(p);
            p.trim_start_matches('/')
                .trim_start_matches("./")
                .trim_end_matches('/')
                .to_string()
        })
        .filter(|p| !p.contains('$') && !p.contains('{') && !p.starts_with(".."))
        .map(|p| if p.is_empty() { ".".into() } else { p })
        .collect()
}

/// A checkout-relative directory from `cd DIR` (`.` and `./` → root; absolute or `..` → None).
fn normal_dir(d: &str) -> Option<Option<String>> {
    if d.starts_with('/') || d.split('/').any(|p| p == "..") || d.starts_with('-') {
        return None;
    }
    let parts: Vec<&str> = d
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    Some((!parts.is_empty()).then(|| parts.join("/")))
}

fn parse_line(text: &str) -> Option<TestCommand> {
    let tokens = tokenize(text)?;
    if tokens.contains(&Token::Other) {
        return None;
    }
    let mut segments: Vec<Vec<Word>> = vec![Vec::new()];
    for t in tokens {
        match t {
            Token::Word(w) => segments.last_mut()?.push(w),
            Token::And => segments.push(Vec::new()),
            // Only `cd DIR; …` is taken apart: another sequence runs its commands whatever
            // the first one did, which this type does not describe.
            Token::Semi if segments.len() == 1 => segments.push(Vec::new()),
            Token::Semi | Token::Other => return None,
        }
    }
    let (cwd, words) = match segments.as_slice() {
        [one] => (None, one.clone()),
        [cd, rest] if cd.len() == 2 && cd[0].value.as_deref() == Some("cd") => {
            (normal_dir(cd[1].value.as_deref()?)?, rest.clone())
        }
        _ => return None,
    };
    // `cd DIR; cmd` would run cmd where it stands if DIR were missing; here, as with `&&`,
    // the directory is required (a missing one fails the command, which says so).
    let mut c = parse_words(&words)?;
    c.written = text.to_string();
    c.cwd = cwd;
    Some(c)
}

/// How many leading words are programs that only wrap the command after them (`timeout 600
/// pytest`, `xvfb-run -a python -m pytest`, `nice -n 5`, `stdbuf -oL`, `time`, `catchsegv`),
/// with their options: the command is what they run. The sandbox keeps its own time limit, and
/// has no display server for `xvfb-run` to start (tests that need one fail there as without it).
fn wrappers(words: &[Word]) -> usize {
    let mut i = 0;
    while let Some(prog) = words.get(i).and_then(|w| w.value.as_deref()) {
        let name = prog.rsplit('/').next().unwrap_or(prog);
        // Options of each wrapper that take the next word as their value.
        let valued: &[&str] = match name {
            "timeout" => &["-s", "--signal", "-k", "--kill-after"],
            "xvfb-run" => &[
                "-s",
                "--server-args",
                "-n",
                "--server-num",
                "-e",
                "--error-file",
                "-f",
                "--auth-file",
                "-w",
                "--wait",
                "-p",
                "--xauth-protocol",
            ],
            "nice" => &["-n", "--adjustment"],
            "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
            "time" | "catchsegv" => &[],
            _ => break,
        };
        let start = i;
        i += 1;
        while let Some(t) = words.get(i).map(Word::text) {
            if !t.starts_with('-') || t == "-" {
                break;
            }
            i += if valued.contains(&t) { 2 } else { 1 };
        }
        // `timeout` takes its duration before the command.
        if name == "timeout" {
            match words.get(i).map(Word::text) {
                Some(d) if d.starts_with(|c: char| c.is_ascii_digit()) => i += 1,
                _ => return start,
            }
        }
        if i >= words.len() {
            return start;
        }
    }
    i
}

/// A command without `cd`: assignments, then the launcher and its arguments.
fn parse_words(words: &[Word]) -> Option<TestCommand> {
    let mut env = Vec::new();
    let mut i = 0;
    while let Some((k, v)) = words.get(i).and_then(words::assignment) {
        env.push((k, v));
        i += 1;
    }
    if words.get(i).and_then(|w| w.value.as_deref()) == Some("env") {
        i += 1;
        while let Some(w) = words.get(i) {
            if let Some((k, v)) = words::assignment(w) {
                env.push((k, v));
                i += 1;
            } else if w.text().starts_with('-') {
                // `env -i`, `env -u`: not a plain set of assignments.
                return None;
            } else {
                break;
            }
        }
    }
    i += wrappers(&words[i..]);
    let argv: Vec<Word> = words[i..].to_vec();
    let prog = argv.first()?.value.clone()?;
    let name = prog.rsplit('/').next().unwrap_or(&prog).to_string();
    let written = words
        .iter()
        .map(|w| w.raw.as_str())
        .collect::<Vec<_>>()
        .join(" ");
    let mut c = TestCommand {
        written,
        cwd: None,
        makes_cwd: false,
        env,
        argv,
        launcher: Launcher::Shell,
        args_at: 1,
        runs: None,
        via: None,
    };
    if is_python(&name) {
        python_launcher(&mut c);
    } else if matches!(name.as_str(), "pytest" | "py.test" | "pytest-3") {
        c.launcher = Launcher::Pytest {
            interpreter: Vec::new(),
        };
    } else if name == "coverage" {
        coverage_launcher(&mut c, 1)?;
    } else if name == "tox" {
        c.launcher = Launcher::Tox;
    } else if name == "nox" {
        c.launcher = Launcher::Nox;
    } else if name == "make" {
        c.launcher = Launcher::Make;
    } else if name == "just" {
        c.launcher = Launcher::Just;
    } else if ENV_RUNNERS.contains(&name.as_str()) {
        env_runner(&mut c, &name)?;
    } else if name == "poe" || name == "pixi" {
        task_runner(&mut c, &name)?;
    } else if DISCOVERING.contains(&name.as_str()) {
        c.launcher = Launcher::Python;
        discovering_as_pytest(&mut c, &name, 1);
    } else if let Some(path) = script_path(&c.argv) {
        c.launcher = Launcher::Script { path };
    } else {
        return None;
    }
    Some(c)
}

/// `./ci.sh`, `scripts/test.sh`, `bash scripts/test.sh`, `sh ci.sh`: the checkout-relative
/// script a command runs.
fn script_path(argv: &[Word]) -> Option<String> {
    let first = argv.first()?.value.clone()?;
    let path = if matches!(first.as_str(), "bash" | "sh") {
        let p = argv.get(1)?.value.clone()?;
        if p.starts_with('-') {
            return None;
        }
        p
    } else if first.ends_with(".sh") || first.starts_with("./") {
        first
    } else {
        return None;
    };
    match normal_dir(&path)? {
        Some(p) if !p.is_empty() => Some(p),
        _ => None,
    }
}

/// `python`, `python3`, `python3.11`, `pypy3`.
fn is_python(name: &str) -> bool {
    let rest = name
        .strip_prefix("python")
        .or_else(|| name.strip_prefix("pypy"));
    rest.is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// `-m`, or a cluster of flags whose last one is `-m` (`-Im`): the module is the next word.
fn is_module_flag(t: &str) -> bool {
    t == "-m" || (t.starts_with('-') && !t.starts_with("--") && t.len() > 2 && t.ends_with('m'))
}

/// `python [opts] -m MODULE …` or `python [opts] script.py …`.
fn python_launcher(c: &mut TestCommand) {
    let mut i = 1;
    // `-Im tox`: a cluster of flags whose last one is `-m` takes the module as the next word.
    let mut module_at = None;
    while let Some(w) = c.argv.get(i) {
        let t = w.text();
        if matches!(t, "-W" | "-X") {
            i += 2;
        } else if is_module_flag(t) {
            module_at = Some(i + 1);
            break;
        } else if t.starts_with('-') && t != "-c" && t.len() > 1 {
            i += 1;
        } else {
            break;
        }
    }
    c.launcher = Launcher::Python;
    c.args_at = i;
    let Some(m_at) = module_at else {
        return;
    };
    let Some(module) = c.argv.get(m_at).and_then(|w| w.value.clone()) else {
        return;
    };
    if !PYTHON_MODULE_LAUNCHERS.contains(&module.as_str()) {
        return;
    }
    c.args_at = m_at + 1;
    c.launcher = match module.as_str() {
        "pytest" | "py.test" => Launcher::Pytest {
            interpreter: c.argv[..m_at - 1].to_vec(),
        },
        "tox" => Launcher::Tox,
        "nox" => Launcher::Nox,
        "unittest" | "zope.testrunner" | "testtools.run" | "subunit.run" => {
            c.launcher = Launcher::Python;
            unittest_as_pytest(c, &module, m_at + 1);
            c.args_at = i;
            return;
        }
        m if DISCOVERING.contains(&m) => {
            c.launcher = Launcher::Python;
            discovering_as_pytest(c, m, m_at + 1);
            c.args_at = i;
            return;
        }
        _ => {
            if coverage_launcher(c, m_at + 1).is_none() {
                c.launcher = Launcher::Python;
                c.args_at = i;
            }
            return;
        }
    };
}

/// `python -m unittest [discover -s DIR -p PATTERN]`, `-m unittest tests.test_x`,
/// `-m zope.testrunner --test-path=DIR`: pytest runs unittest's test cases, so what the command
/// runs is pytest on those paths, collecting the files the runner would (`-o python_files`).
fn unittest_as_pytest(c: &mut TestCommand, runner: &str, at: usize) {
    let given: Vec<Word> = c.argv[at.min(c.argv.len())..].to_vec();
    let args: Vec<String> = given.iter().map(|w| w.text().to_string()).collect();
    // Paths as words: one only a shell knows (`tests/test_*`, `$DIR`) is handed on as written,
    // so the shell expands it as it did under the runner.
    let mut paths: Vec<Word> = Vec::new();
    let unittest_like = UNITTEST_LIKE.contains(&runner);
    let mut pattern = if unittest_like {
        "test*.py"
    } else {
        "test*.py tests.py"
    }
    .to_string();
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        let next = args.get(i + 1).cloned();
        match a.as_str() {
            "discover" | "-v" | "--verbose" | "-q" | "--quiet" | "-b" | "--buffer" | "-f"
            | "--failfast" | "-c" | "--catch" | "--auto-color" | "--" => {}
            "-s" | "--start-directory" | "--test-path" | "--path" => {
                if let Some(w) = given.get(i + 1) {
                    paths.push(w.clone());
                }
                i += 1;
            }
            "-p" | "--pattern" => {
                if let Some(n) = next {
                    pattern = n;
                }
                i += 1;
            }
            "-t" | "--top-level-directory" | "-k" | "--package" | "-m" | "--module" => i += 1,
            s if s.starts_with("--test-path=") => paths.push(Word::lit(&s["--test-path=".len()..])),
            s if s.starts_with('-') => {}
            // `tests.test_x` (a module) or `tests/test_x.py`, or a glob the shell expands.
            s if unittest_like => {
                if given[i].value.is_none() || s.ends_with(".py") || s.contains('/') {
                    paths.push(given[i].clone());
                } else {
                    paths.push(Word::lit(&format!("{}.py", s.replace('.', "/"))));
                }
            }
            _ => {}
        }
        i += 1;
    }
    let mut words = vec![Word::lit("python"), Word::lit("-m"), Word::lit("pytest")];
    words.push(Word::lit("-o"));
    words.push(Word::lit(&format!("python_files={pattern}")));
    words.extend(paths);
    if let Some(mut inner) = parse_words(&words) {
        inner.written = raw_join(&inner.argv);
        c.via = Some(format!("pytest runs `{runner}`'s test cases"));
        c.runs = Some(Box::new(inner));
    }
}

/// `green -tvvvv green`, `trial pkg`, `python -m twisted.trial pkg.test`, `nose2 -s tests`:
/// pytest runs unittest's test cases (trial's are unittest's too), so what the runner runs is
/// pytest on the packages or modules it names, collecting `test*.py`; nose2's
/// `-s DIR` is a start directory; no name: discovery from the working directory, as theirs.
/// The runners' own options (colour, verbosity, processes, reporters, coverage) are theirs
/// and dropped.
fn discovering_as_pytest(c: &mut TestCommand, runner: &str, at: usize) {
    let given: Vec<Word> = c.argv[at.min(c.argv.len())..].to_vec();
    let mut paths: Vec<Word> = Vec::new();
    let mut i = 0;
    while i < given.len() {
        let w = &given[i];
        let t = w.text();
        let value = |j: usize| given.get(j).cloned();
        match t {
            // nose2's start directory (green's `-s N` is a number of processes).
            "-s" | "--start-dir" if runner == "nose2" => {
                if let Some(d) = value(i + 1) {
                    paths.push(d);
                }
                i += 1;
            }
            "-s" | "--processes" | "-j" | "--jobs" | "-t" | "--top-level-directory"
                if runner != "green" || t != "-t" =>
            {
                i += 1;
            }
            "--reporter" | "--temp-directory" | "--logfile" | "-c" | "--config" | "--plugin"
            | "-A" | "--attribute" | "-o" | "--junit-report" => i += 1,
            s if s.starts_with('-') => {}
            s if w.value.is_none() || s.ends_with(".py") || s.contains('/') => {
                paths.push(w.clone())
            }
            // A dotted name as a path; a module's (`X` where `X.py` exists) is told from a
            // package's once the checkout is there ([`TestCommand::with_module_paths`]).
            s => paths.push(Word::lit(&s.replace('.', "/"))),
        }
        i += 1;
    }
    let mut words = vec![Word::lit("python"), Word::lit("-m"), Word::lit("pytest")];
    words.push(Word::lit("-o"));
    words.push(Word::lit("python_files=test*.py"));
    words.extend(paths);
    if let Some(mut inner) = parse_words(&words) {
        inner.written = raw_join(&inner.argv);
        c.via = Some(format!("pytest runs `{runner}`'s test cases"));
        c.runs = Some(Box::new(inner));
    }
}

/// `coverage run [opts] -m pytest …` from `argv[at]` on: pytest, its arguments after the module.
fn coverage_launcher(c: &mut TestCommand, at: usize) -> Option<()> {
    if c.argv.get(at)?.text() != "run" {
        return None;
    }
    let mut i = at + 1;
    // Where the runner's name is: after `-m`, or the word itself for a runner's console script
    // (`coverage run nose2 -v`, `coverage run pytest`: coverage runs it from the PATH).
    let mut module_at = None;
    while let Some(w) = c.argv.get(i) {
        let t = w.text();
        if t == "-m" {
            module_at = Some(i + 1);
            break;
        }
        if ["pytest", "py.test"].contains(&t) || DISCOVERING.contains(&t) {
            module_at = Some(i);
            break;
        }
        // `coverage run [opts] tests.py`: the script runs as under `python tests.py`
        // (coverage only measures it).
        if t.ends_with(".py") && !t.starts_with('-') {
            c.launcher = Launcher::Python;
            c.args_at = i;
            return Some(());
        }
        if !t.starts_with('-') {
            return None;
        }
        let takes = matches!(
            t,
            "--source"
                | "--rcfile"
                | "--omit"
                | "--include"
                | "--data-file"
                | "--context"
                | "--concurrency"
        );
        i += if takes { 2 } else { 1 };
    }
    let at = module_at?;
    let module = c.argv.get(at)?.value.clone()?;
    if UNITTEST_LIKE.contains(&module.as_str()) || module == "zope.testrunner" {
        c.launcher = Launcher::Python;
        unittest_as_pytest(c, &module, at + 1);
        return Some(());
    }
    if DISCOVERING.contains(&module.as_str()) {
        c.launcher = Launcher::Python;
        discovering_as_pytest(c, &module, at + 1);
        return Some(());
    }
    if module != "pytest" && module != "py.test" {
        return None;
    }
    c.launcher = Launcher::Pytest {
        interpreter: Vec::new(),
    };
    c.args_at = at + 1;
    Some(())
}

/// `uv run [opts] CMD …`, `poetry run CMD …`, `hatch run [ENV:]SCRIPT …`, `hatch test …`,
/// `pdm run SCRIPT|CMD …`, `pipenv run CMD …`, `rye run …`.
fn env_runner(c: &mut TestCommand, tool: &str) -> Option<()> {
    let mut i = 1;
    // `hatch -e test run …`, `poetry -C sub run …`: the tool's own options first (`uvx` is
    // `uv tool run`: its options come after the verb it does not write).
    while let Some(w) = c.argv.get(i).filter(|_| tool != "uvx") {
        let t = w.text();
        if !t.starts_with('-') {
            break;
        }
        i += if matches!(
            t,
            "-e" | "--env" | "-C" | "--directory" | "-P" | "--project" | "-p"
        ) {
            2
        } else {
            1
        };
    }
    let verb = if tool == "uvx" {
        i = 0;
        "run".to_string()
    } else {
        c.argv.get(i)?.value.clone()?
    };
    if tool == "hatch" && verb == "test" {
        c.launcher = Launcher::EnvRunner {
            tool: "hatch test".into(),
        };
        c.args_at = i + 1;
        // `hatch test [its options] [pytest args]`: its options are hatch's own.
        let mut j = i + 1;
        while let Some(w) = c.argv.get(j) {
            let t = w.text();
            let own = matches!(
                t,
                "-r" | "--randomize"
                    | "--python"
                    | "-py"
                    | "-p"
                    | "--parallel"
                    | "-c"
                    | "--cover"
                    | "--cover-quiet"
                    | "-a"
                    | "--all"
                    | "--retries"
                    | "--retry-delay"
            );
            if !own {
                break;
            }
            j += if matches!(t, "--retries" | "--retry-delay" | "--python" | "-py") {
                2
            } else {
                1
            };
        }
        let mut inner = parse_words(&[Word::lit("python"), Word::lit("-m"), Word::lit("pytest")])?;
        inner.argv.extend(c.argv[j..].iter().cloned());
        inner.written = raw_join(&inner.argv);
        c.runs = Some(Box::new(inner));
        c.via = Some("`hatch test` runs pytest".into());
        return Some(());
    }
    if verb != "run" {
        return None;
    }
    i += 1;
    while let Some(w) = c.argv.get(i) {
        let t = w.text();
        // `hatch run +py=3.11 test`: a matrix selector.
        if !(t.starts_with('-') || (tool == "hatch" && t.starts_with('+'))) {
            break;
        }
        let takes = matches!(
            t,
            "--with"
                | "--from"
                | "--with-requirements"
                | "--with-editable"
                | "--extra"
                | "--group"
                | "--python"
                | "-p"
                | "--package"
                | "--env-file"
                | "--directory"
                | "--project"
                | "--index"
                | "--index-url"
                | "-C"
                | "-P"
        );
        i += if takes { 2 } else { 1 };
    }
    c.launcher = Launcher::EnvRunner {
        tool: format!("{tool} run"),
    };
    c.args_at = i;
    let inner_words = c.argv.get(i..).unwrap_or(&[]).to_vec();
    if inner_words.is_empty() {
        return None;
    }
    // `uv run pytest …` runs pytest; `hatch run test` / `pdm run test` may name a script the
    // repository's pyproject.toml defines (resolved with the files).
    if let Some(mut inner) = parse_words(&inner_words) {
        inner.written = raw_join(&inner_words);
        c.via = Some(format!(
            "`{tool} run` runs it in the environment the image already is"
        ));
        c.runs = Some(Box::new(inner));
    }
    Some(())
}

/// `poe [opts] TASK args` (poethepoet) and `pixi run [opts] TASK args`: a task the
/// repository's config defines (`[tool.poe.tasks]`, `[tool.pixi.tasks]`, pixi.toml), resolved
/// with the files ([`crate::sandbox::ci_resolve`]); `args_at` is the task's name.
fn task_runner(c: &mut TestCommand, tool: &str) -> Option<()> {
    let mut i = 1;
    if tool == "pixi" {
        if c.argv.get(1)?.value.as_deref()? != "run" {
            return None;
        }
        i = 2;
    }
    let takes: &[&str] = if tool == "pixi" {
        &[
            "-e",
            "--environment",
            "--manifest-path",
            "--auth-file",
            "--pypi-keyring-provider",
            "--concurrent-solves",
            "--concurrent-downloads",
        ]
    } else {
        &["--root", "-C", "--directory", "-e", "--executor"]
    };
    while let Some(w) = c.argv.get(i) {
        let t = w.text();
        if !t.starts_with('-') {
            break;
        }
        i += if takes.contains(&t) { 2 } else { 1 };
    }
    c.argv.get(i)?.value.as_ref()?;
    c.launcher = Launcher::EnvRunner {
        tool: if tool == "pixi" {
            "pixi run".into()
        } else {
            "poe".into()
        },
    };
    c.args_at = i;
    Some(())
}

/// Serde for a file that stores the command as its text (a bench task's `test_command`): the
/// text is parsed where it is read.
pub mod as_written {
    use super::TestCommand;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(c: &TestCommand, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&c.written)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<TestCommand, D::Error> {
        let text = String::deserialize(d)?;
        TestCommand::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;
