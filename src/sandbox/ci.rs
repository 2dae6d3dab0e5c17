//! How the repository's CI installs and runs its Python tests, read from the checkout (pure).
//!
//! Sources, in order: GitHub workflow `run:` steps (and `actions/setup-python`'s
//! `python-version`, matrix included), then what a test step delegates to — `tox.ini`
//! (`commands`, `usedevelop`, `skip_install`, `setenv`), `noxfile.py` (`session.run`,
//! `session.install`), a `Makefile` test target — and the project metadata (`requires-python`,
//! `python_requires`, `Programming Language :: Python :: X.Y` classifiers). The result is a
//! [`CiPlan`]: the install mode prepare mirrors, `PYTHONPATH` entries, the Python version, and
//! notes saying where each came from. The rules are documented in images/README.md.

use super::ci_resolve::{self, install_of_args};
use super::ci_text::ini;
use crate::testcmd::TestCommand;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::LazyLock;

use regex::Regex;
use serde_yaml::Value;

// A command line that runs tests (word-bounded so `pytest-cov` in an install line still
// counts as "mentions pytest": installs are excluded separately).
static TEST_LIKE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    ci_re(
        r"(?:^|[\s/;&|(])(?:py\.?test|tox|nox|nose2?|cargo (?:test|nextest)|(?:npx |pnpm exec |yarn )?(?:jest|vitest)|go test|(?:npm|yarn|pnpm)(?: run)? test|make(?: -\S+)* (?:test|tests|check)|runtests(?:\.py)?|setup\.py test|manage\.py test|django-admin test|trial|zope-testrunner|stestr|green|(?:just|invoke|inv|poe) test\w*)\b|-m (?:pytest|unittest|tox|nox|django test|tests?|testtools\.run|subunit\.run|zope\.testrunner|twisted\.trial|nose2?|green|stestr|[\w.]+\.tests?(?:\.\w+)*)\b",
    )
});
static INSTALL_LIKE: LazyLock<Option<Regex>> = LazyLock::new(|| {
    ci_re(
        r"\b(?:pip3? install|-m pip install|uv pip|uv sync|uv add|pipx install|poetry (?:install|add|lock)|pipenv (?:install|sync)|pdm (?:install|sync)|conda (?:install|create|env)|mamba (?:install|create)|apt(?:-get)? (?:install|update)|brew install|npm (?:ci|install|i)\b|yarn install|pnpm (?:install|i)\b|cargo (?:install|build|fetch)|go (?:install|mod|get|build)|pip download|python -m build|setup\.py (?:install|develop|build|sdist|bdist))",
    )
});

/// One command installs or builds something (pip, uv, poetry, apt, npm ci, cargo build, …).
/// Shared with `github::logs`, which picks the CI step that ran the tests.
pub fn is_install_cmd(cmd: &str) -> bool {
    INSTALL_LIKE.as_ref().is_some_and(|r| r.is_match(cmd))
}

/// One command (a script line, or one `&&`/`;` part of it) runs tests and installs nothing.
pub fn is_test_cmd(cmd: &str) -> bool {
    let is = |re: &LazyLock<Option<Regex>>| re.as_ref().is_some_and(|r| r.is_match(cmd));
    is(&TEST_LIKE) && !is(&INSTALL_LIKE)
}

fn ci_re(p: &str) -> Option<Regex> {
    Regex::new(p).ok()
}

pub use super::ci_resolve::Install;

#[derive(Debug, Clone, Default, PartialEq)]
pub struct CiPlan {
    pub install: Option<Install>,
    /// Directories (relative to the checkout) CI puts on `PYTHONPATH` for the tests.
    pub pythonpath: Vec<String>,
    /// The test command CI runs, typed, with what it delegates to (tox/nox/make/scripts)
    /// resolved.
    pub test_cmd: Option<TestCommand>,
    /// The Python version to test with, and where it came from.
    pub python: Option<(String, String)>,
    /// What CI installs for the tests (tox/nox env, the job's `pip install` lines), when it
    /// says; `deps.py` falls back to the project's metadata otherwise.
    pub deps: Option<super::ci_deps::DepsSource>,
    /// One line per decision, for prepare's output.
    pub notes: Vec<String>,
}

/// Files [`plan`] reads, relative to the checkout root.
pub fn wanted(rel: &str) -> bool {
    matches!(
        rel,
        "tox.ini"
            | "pytest.ini"
            | "tox.toml"
            | "hatch.toml"
            | "noxfile.py"
            | "Makefile"
            | "makefile"
            | "GNUmakefile"
            | "justfile"
            | "Justfile"
            | ".justfile"
            | "poe_tasks.toml"
            | "pixi.toml"
            | "pyproject.toml"
            | "setup.cfg"
            | "setup.py"
    ) || (rel.ends_with(".sh") && rel.matches('/').count() <= 1)
        // `python -m tests` runs a package's `__main__` (a unittest runner: `ci_resolve`).
        || (rel.ends_with("/__main__.py") && rel.matches('/').count() == 1)
        || (rel.starts_with(".github/workflows/")
            && !rel[".github/workflows/".len()..].contains('/')
            && (rel.ends_with(".yml") || rel.ends_with(".yaml")))
}

/// One Python module of the checkout by its relative path (`None` when it is missing, a
/// symlink, larger than the cap of [`read_files`] or unreadable): a module a test command
/// runs with `python -m`, which [`wanted`] does not name.
pub fn read_module(root: &Path, rel: &str) -> Option<(String, String)> {
    if rel.split('/').any(|p| p.is_empty() || p == "..") {
        return None;
    }
    let p = root.join(rel);
    if std::fs::symlink_metadata(&p).ok()?.is_symlink() {
        return None;
    }
    read_capped(&p).map(|t| (rel.to_string(), t))
}

/// A file's text when it is a file of at most 256 KiB.
fn read_capped(p: &Path) -> Option<String> {
    std::fs::metadata(p)
        .is_ok_and(|m| m.is_file() && m.len() <= 256 << 10)
        .then(|| std::fs::read_to_string(p).ok())
        .flatten()
}

/// Reads the files [`wanted`] names (at most 256 KiB each; unreadable ones are skipped).
pub fn read_files<'a>(
    root: &Path,
    rels: impl IntoIterator<Item = &'a str>,
) -> BTreeMap<String, String> {
    rels.into_iter()
        .filter(|r| wanted(r))
        .filter_map(|rel| Some((rel.to_string(), read_capped(&root.join(rel))?)))
        .collect()
}

/// One workflow job's view: its script lines in order (each with the literal env the
/// workflow, the job and its step set for it), env `PYTHONPATH`, setup-python versions.
#[derive(Debug, Default)]
struct Job {
    lines: Vec<String>,
    envs: Vec<Vec<(String, String)>>,
    pythonpath: Vec<String>,
    versions: Vec<String>,
}

fn scalar(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.trim().to_string()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// An `env:` mapping's variables with literal values, laid over `base` (a later level wins).
/// `${{ … }}` values (secrets, contexts) are left out: only the runner knows them.
/// `PYTHONPATH` is left out too (it is read into directories, [`env_pythonpath`]), and so are
/// the runner's own (`PATH`, `HOME`, `GITHUB_*`, …).
fn literal_env(base: &[(String, String)], v: Option<&Value>) -> Vec<(String, String)> {
    let mut out = base.to_vec();
    for (k, v) in v.and_then(Value::as_mapping).into_iter().flatten() {
        let (Some(k), Some(v)) = (k.as_str(), scalar(v)) else {
            continue;
        };
        let name_ok = !k.is_empty()
            && !k.starts_with(|c: char| c.is_ascii_digit())
            && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        // The runner's own variables describe its machine, not the sandbox.
        let runners = [
            "PATH",
            "HOME",
            "PWD",
            "SHELL",
            "USER",
            "TMPDIR",
            "PYTHONPATH",
        ];
        if !name_ok
            || runners.contains(&k)
            || k.starts_with("GITHUB_")
            || k.starts_with("RUNNER_")
            || v.contains("${{")
        {
            continue;
        }
        out.retain(|(n, _)| n != k);
        out.push((k.to_string(), v));
    }
    out
}

fn env_pythonpath(v: Option<&Value>) -> Vec<String> {
    v.and_then(|e| e.get("PYTHONPATH"))
        .and_then(scalar)
        .map(|s| split_pythonpath(&s))
        .unwrap_or_default()
}

/// `src:.` / `${{ github.workspace }}/src` / `{toxinidir}/src` → checkout-relative dirs.
fn split_pythonpath(s: &str) -> Vec<String> {
    crate::testcmd::pythonpath_dirs(s)
}

/// Script lines with `\` continuations joined.
fn script_lines(run: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for l in run.lines() {
        let l = l.trim();
        match out.last_mut() {
            Some(prev) if prev.ends_with('\\') => {
                prev.pop();
                prev.truncate(prev.trim_end().len());
                prev.push(' ');
                prev.push_str(l);
            }
            _ if !l.is_empty() && !l.starts_with('#') => out.push(l.to_string()),
            _ => {}
        }
    }
    out
}

fn jobs_of(workflow: &str) -> Vec<Job> {
    let Ok(doc) = serde_yaml::from_str::<Value>(workflow) else {
        return Vec::new();
    };
    let global_pp = env_pythonpath(doc.get("env"));
    let global_env = literal_env(&[], doc.get("env"));
    let Some(jobs) = doc.get("jobs").and_then(Value::as_mapping) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (_, job) in jobs {
        let mut j = Job {
            pythonpath: global_pp.clone(),
            ..Job::default()
        };
        j.pythonpath.extend(env_pythonpath(job.get("env")));
        let job_env = literal_env(&global_env, job.get("env"));
        let matrix = job.get("strategy").and_then(|s| s.get("matrix"));
        for step in job
            .get("steps")
            .and_then(Value::as_sequence)
            .into_iter()
            .flatten()
        {
            if let Some(uses) = step.get("uses").and_then(Value::as_str)
                && uses.starts_with("actions/setup-python")
                && let Some(v) = step.get("with").and_then(|w| w.get("python-version"))
            {
                j.versions.extend(versions_of(v, matrix));
            }
            if let Some(run) = step.get("run").and_then(Value::as_str) {
                let pp = env_pythonpath(step.get("env"));
                let env = literal_env(&job_env, step.get("env"));
                for l in script_lines(run) {
                    if !pp.is_empty() && is_test_cmd(&l) {
                        j.pythonpath.extend(pp.clone());
                    }
                    j.lines.push(l);
                    j.envs.push(env.clone());
                }
            }
        }
        out.push(j);
    }
    out
}

/// `3.11`, `"3.12"`, `${{ matrix.python-version }}` (the matrix list), a multi-line list.
fn versions_of(v: &Value, matrix: Option<&Value>) -> Vec<String> {
    let Some(s) = scalar(v) else {
        return Vec::new();
    };
    if let Some(key) = s
        .strip_prefix("${{")
        .and_then(|r| r.strip_suffix("}}"))
        .map(str::trim)
        .and_then(|r| r.strip_prefix("matrix."))
    {
        let list = matrix.and_then(|m| m.get(key));
        return match list {
            Some(Value::Sequence(items)) => items.iter().filter_map(scalar).collect(),
            Some(other) => scalar(other).into_iter().collect(),
            None => Vec::new(),
        };
    }
    s.split_whitespace().map(str::to_string).collect()
}

/// `3.11` → (3, 11); `3.12-dev`, `pypy3.9`, `3.x` → None.
fn parse_version(s: &str) -> Option<(u32, u32)> {
    let s = s.trim().trim_matches(['"', '\'']);
    let mut it = s.split('.');
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    Some((major, minor))
}

/// The minimum and (exclusive) maximum minor versions a `requires-python` allows (3.x only).
fn allowed(spec: &str, v: (u32, u32)) -> bool {
    spec.split(',').all(|clause| {
        let c = clause.trim();
        let (op, rest) = ["~=", ">=", "<=", "==", "!=", ">", "<"]
            .iter()
            .find_map(|op| c.strip_prefix(op).map(|r| (*op, r.trim())))
            .unwrap_or(("", c));
        let wild = rest.ends_with(".*");
        let Some(w) = parse_version(rest.trim_end_matches(".*"))
            .or_else(|| rest.parse::<u32>().ok().map(|m| (m, 0)))
        else {
            return true;
        };
        match op {
            ">=" | "~=" => v >= w,
            ">" => v > w || (v == w && rest.matches('.').count() >= 2),
            "<=" => v <= w,
            "<" => v < w,
            "==" if wild => v == w,
            "==" => v == w,
            "!=" if wild => v != w,
            "!=" => true,
            _ => true,
        }
    })
}

/// The interpreter to test with: the newest CI version that `requires-python` allows, else the
/// newest classifier version it allows; `None` when the repository names none.
pub fn choose_python(
    ci: &[String],
    requires: Option<&str>,
    classifiers: &[String],
) -> Option<(String, String)> {
    let ok = |v: (u32, u32)| requires.is_none_or(|r| allowed(r, v));
    let newest = |vs: &[String]| {
        vs.iter()
            .filter_map(|s| parse_version(s))
            .filter(|v| v.0 == 3 && ok(*v))
            .max()
    };
    if let Some((a, b)) = newest(ci) {
        return Some((
            format!("{a}.{b}"),
            "actions/setup-python python-version".into(),
        ));
    }
    if let Some((a, b)) = newest(classifiers) {
        return Some((format!("{a}.{b}"), "classifiers".into()));
    }
    None
}

static CLASSIFIER: LazyLock<Option<Regex>> =
    LazyLock::new(|| Regex::new(r"Programming Language :: Python :: (\d+\.\d+)\b").ok());
static REQUIRES: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"(?:requires-python|python_requires)\s*[=:]\s*(?:["']([^"']+)["']|([^\s"'#][^#\n]*?)\s*$)"#)
        .ok()
});

/// `requires-python` / `python_requires` and `Programming Language :: Python :: 3.X`, read
/// line by line from pyproject.toml, setup.cfg and setup.py (all three spell them alike).
fn metadata(files: &BTreeMap<String, String>) -> (Option<String>, Vec<String>) {
    let mut requires = None;
    let mut classifiers = Vec::new();
    for name in ["pyproject.toml", "setup.cfg", "setup.py"] {
        let Some(t) = files.get(name) else { continue };
        for line in t.lines() {
            if let Some(re) = CLASSIFIER.as_ref() {
                classifiers.extend(re.captures_iter(line).map(|c| c[1].to_string()));
            }
            if requires.is_none()
                && let Some(c) = REQUIRES.as_ref().and_then(|r| r.captures(line))
            {
                requires = c.get(1).or(c.get(2)).map(|m| m.as_str().trim().to_string());
            }
        }
    }
    (requires, classifiers)
}

/// The install mode an install line shows (None: it installs only dependencies).
fn install_of_line(l: &str) -> Option<Install> {
    let words: Vec<String> = shlex::split(l).unwrap_or_default();
    let pip =
        l.contains("pip install") || l.contains("pip3 install") || l.contains("uv pip install");
    // poetry, pdm and uv install the project itself editable unless told not to.
    let tool_install = (l.contains("poetry install") && !l.contains("--no-root"))
        || ((l.contains("pdm install") || l.contains("pdm sync")) && !l.contains("--no-self"))
        || (l.contains("uv sync") && !l.contains("--no-install-project"));
    if tool_install || l.contains("setup.py develop") {
        return Some(Install::Editable);
    }
    if l.contains("setup.py install") {
        return Some(Install::Built);
    }
    if pip {
        if let Some(m) = install_of_args(&words) {
            return Some(m);
        }
        if words
            .iter()
            .any(|w| w.starts_with("dist/") || w.ends_with(".whl"))
        {
            return Some(Install::Built);
        }
    }
    None
}

/// What a test command installs in its own environment (the tox env or nox session it runs,
/// what `uv run`'s options add), as [`deps_of`] reads a CI line with no job around it.
pub fn deps_of_command(
    cmd: &TestCommand,
    delegation: Option<&ci_resolve::Delegation>,
    files: &BTreeMap<String, String>,
    python: Option<&str>,
) -> Option<super::ci_deps::DepsSource> {
    let line = cmd.levels().next().map(|c| c.written.clone())?;
    deps_of(&line, delegation, files, &[], python, LineOf::Given)
}

/// Whose line a dependency source is read from, for the evidence it names: CI's (in the
/// workflow file given, when there is one) or a command given to patchloop.
#[derive(Clone, Copy)]
enum LineOf<'a> {
    Ci(&'a str),
    Given,
}

impl LineOf<'_> {
    /// `CI runs `tox -e py``, with the workflow file when `with_file` and known.
    fn runs(self, line: &str, with_file: bool) -> String {
        match self {
            LineOf::Ci(path) if with_file && !path.is_empty() => {
                format!("CI runs `{line}` in {path}")
            }
            LineOf::Ci(_) => format!("CI runs `{line}`"),
            LineOf::Given => format!("the given test command runs `{line}`"),
        }
    }
}

/// What CI installs for a test line: the tox env or nox session it runs, else the job's
/// `pip install` lines before it (`before`). `None` when neither names anything.
fn deps_of(
    line: &str,
    delegation: Option<&ci_resolve::Delegation>,
    files: &BTreeMap<String, String>,
    before: &[String],
    python: Option<&str>,
    of: LineOf,
) -> Option<super::ci_deps::DepsSource> {
    use super::ci_deps;
    let lower = line.to_ascii_lowercase();
    if lower.contains("tox")
        && let Some((from, text)) = ci_deps::tox_config(files)
    {
        let tox = ini(&text);
        let env = ci_deps::tox_env(line, &tox, python);
        let mut d = ci_deps::tox_deps(&tox, env.as_deref());
        if !d.is_empty() {
            d.source = format!(
                "{from} [testenv{}] deps/extras ({})",
                env.map(|e| format!(":{e}")).unwrap_or_default(),
                of.runs(line, false)
            );
            return Some(d);
        }
    } else if lower.contains("nox")
        && let Some(nf) = files.get("noxfile.py")
        && let Some(r) = delegation
    {
        let mut d = ci_deps::nox_deps(nf, &r.runs.written);
        if !d.is_empty() {
            d.source = format!("noxfile.py session.install ({})", of.runs(line, false));
            return Some(d);
        }
    }
    // `hatch test` runs the `hatch-test` environment, `hatch run [ENV:]SCRIPT` its ENV.
    let words: Vec<&str> = line.split_whitespace().collect();
    let hatch_env = words.windows(2).find_map(|w| match (w[0], w[1]) {
        ("hatch", "test") => Some("hatch-test".to_string()),
        ("hatch", "run") => None,
        _ => None,
    });
    let hatch_env = hatch_env.or_else(|| {
        let at = words.windows(2).position(|w| w == ["hatch", "run"])?;
        let script = words.get(at + 2)?;
        Some(
            script
                .split_once(':')
                .map_or("default", |(env, _)| env)
                .to_string(),
        )
    });
    if let Some(env) = hatch_env
        && let Some(mut d) = ci_deps::hatch_deps(files, &env)
    {
        d.source = format!("{} ({})", d.source, of.runs(line, false));
        return Some(d);
    }
    // What the delegate installs before its test line (a justfile recipe's dependencies).
    let before: Vec<String> = before
        .iter()
        .chain(delegation.map_or(&[][..], |d| d.before.as_slice()))
        .cloned()
        .collect();
    let before = before.as_slice();
    let pip = ci_deps::pip_deps(before);
    // uv: `uv sync` before the test line, `uv run` in it or in what it delegates to (a
    // Makefile's `uv run coverage run -m pytest`) install the project's default groups (`dev`)
    // and what their options name; `uv pip install` lines are pip's.
    let mut runs: Vec<String> = vec![line.to_string()];
    if let Some(d) = delegation {
        runs.extend(d.runs.levels().map(|c| c.written.clone()));
    }
    let uv: Vec<Vec<String>> = ci_deps::uv_invocations(before)
        .into_iter()
        .chain(ci_deps::uv_invocations(&runs))
        .collect();
    let pyproject = files.get("pyproject.toml").map(String::as_str);
    // A tool's environment plus the job's pip lines, named for the receipt.
    let environment = |mut d: ci_deps::DepsSource, pip, tool: &str| {
        d.merge(pip);
        if d.is_empty() {
            return None;
        }
        let named = if d.extras.is_empty() {
            String::new()
        } else {
            format!(": groups and extras {}", d.extras.join(", "))
        };
        d.source = format!("{tool}{named} ({})", of.runs(line, true));
        Some(d)
    };
    if !uv.is_empty() {
        return environment(
            ci_deps::uv_deps(&uv, pyproject),
            pip,
            "uv's project environment",
        );
    }
    // pdm and poetry: an install before the test line (or a `run` with none: CI installed the
    // project some way) installs the tool's default groups.
    let job: Vec<String> = before.iter().cloned().chain(runs).collect();
    let pdm = ci_deps::tool_installs(&job, "pdm", &["install", "sync"]);
    if !pdm.is_empty() {
        return environment(ci_deps::pdm_deps(&pdm, pyproject), pip, "pdm's environment");
    }
    let poetry = ci_deps::tool_installs(&job, "poetry", &["install"]);
    if !poetry.is_empty() {
        return environment(
            ci_deps::poetry_deps(&poetry, pyproject),
            pip,
            "poetry's environment",
        );
    }
    let mut d = pip;
    if d.is_empty() {
        return None;
    }
    d.source = match of {
        LineOf::Ci(path) if !path.is_empty() => {
            format!("the `pip install` lines of the test job in {path}")
        }
        _ => "the `pip install` lines of the test job".to_string(),
    };
    if let Some(dl) = delegation.filter(|dl| !dl.before.is_empty()) {
        d.source = format!("{} and of what {} depends on", d.source, dl.note);
    }
    Some(d)
}

/// The CI plan of a checkout (see the module docs).
pub fn plan(files: &BTreeMap<String, String>) -> CiPlan {
    let mut p = CiPlan::default();
    let mut ci_versions = Vec::new();
    for (path, text) in files.iter().filter(|(k, _)| k.starts_with(".github/")) {
        for job in jobs_of(text) {
            // A tox env that builds docs or lints is not the test step (a docs job may sort
            // before the test job), nor is a nox session whose runs the noxfile shows and none
            // runs tests (particle's cd.yml: `nox -s zipapp`, before ci.yml's `nox -s tests`).
            let nox_without_tests = |l: &str| {
                files.contains_key("noxfile.py")
                    && TestCommand::parse(l).is_ok_and(|c| {
                        let (c, d) = ci_resolve::resolve(c, files, None, &is_test_cmd);
                        // At some level `nox` (`uvx nox -s docs`).
                        d.is_none()
                            && c.levels()
                                .any(|c| c.launcher == crate::testcmd::Launcher::Nox)
                    })
            };
            let Some(ti) = job.lines.iter().position(|l| {
                is_test_cmd(l) && !super::ci_deps::is_non_test_tox(l) && !nox_without_tests(l)
            }) else {
                continue;
            };
            ci_versions.extend(job.versions.clone());
            if p.test_cmd.is_some() {
                continue;
            }
            let line = job.lines[ti].clone();
            let newest = job
                .versions
                .iter()
                .filter_map(|v| parse_version(v).map(|pv| (pv, v.clone())))
                .max()
                .map(|(_, v)| v);
            let cmd = TestCommand::parse(&line).unwrap_or_else(|_| TestCommand::shell_only(&line));
            let (mut cmd, delegation) =
                ci_resolve::resolve(cmd, files, newest.as_deref(), &is_test_cmd);
            // The env the workflow sets around the line is how CI runs it (termcolor's
            // `FORCE_COLOR: 1` decides what its tests expect); the line's own assignments win.
            let mut added = Vec::new();
            for (k, v) in job.envs[ti].iter().rev() {
                if !cmd.env.iter().any(|(n, _)| n == k) {
                    cmd = cmd.with_env(k, v);
                    added.push(k.clone());
                }
            }
            if !added.is_empty() {
                let mut names = added;
                names.reverse();
                p.notes.push(format!(
                    "the workflow's env for that step: {}",
                    names.join(", ")
                ));
            }
            let installs: Option<Install> = job.lines[..ti].iter().find_map(|l| install_of_line(l));
            // What the line itself puts on PYTHONPATH (`PYTHONPATH=src pytest`).
            let inline_pp: Vec<String> = cmd
                .env
                .iter()
                .filter(|(k, _)| k == "PYTHONPATH")
                .flat_map(|(_, v)| split_pythonpath(v.value.as_deref().unwrap_or(&v.raw)))
                .collect();
            p.pythonpath.extend(job.pythonpath.clone());
            p.pythonpath.extend(inline_pp);
            p.deps = deps_of(
                &line,
                delegation.as_ref(),
                files,
                &job.lines[..ti],
                newest.as_deref(),
                LineOf::Ci(path),
            );
            match &delegation {
                Some(d) => {
                    p.notes.push(format!(
                        "CI ({path}) runs `{line}`, which runs `{}` ({})",
                        d.runs.written, d.note
                    ));
                    // What it delegates to may sync the project itself (a Makefile's `uv
                    // run …`), as the line would without the delegation.
                    let synced = d
                        .runs
                        .levels()
                        .any(|c| matches!(c.launcher, crate::testcmd::Launcher::EnvRunner { .. }));
                    p.install = d
                        .install
                        .or(installs)
                        .or(synced.then_some(Install::Editable));
                    p.pythonpath.extend(d.pythonpath.clone());
                }
                None => {
                    p.notes.push(format!("CI ({path}) runs `{line}`"));
                    // tox installs the package unless told not to; a tox env that could
                    // not be read still tests an installed package, not the checkout's
                    // directory (pluggy: `src/` is on no path, the runner's own copy wins).
                    // `uv run`, `poetry run`, `hatch run`/`test` and `pdm run` sync the
                    // project into their environment first (editable).
                    let default = match cmd.launcher {
                        crate::testcmd::Launcher::Tox => Install::Built,
                        crate::testcmd::Launcher::EnvRunner { .. } => Install::Editable,
                        _ => Install::Checkout,
                    };
                    p.install = Some(installs.unwrap_or(default));
                }
            }
            p.test_cmd = Some(cmd);
        }
    }
    // Without a workflow, a tox.ini or noxfile still says how the tests are meant to run.
    if p.test_cmd.is_none() {
        for runner in ["tox", "nox"] {
            let Ok(cmd) = TestCommand::parse(runner) else {
                continue;
            };
            let (cmd, delegation) = ci_resolve::resolve(cmd, files, None, &is_test_cmd);
            let Some(d) = delegation else { continue };
            p.deps = deps_of(runner, Some(&d), files, &[], None, LineOf::Ci(""));
            p.notes
                .push(format!("{} runs `{}`", d.note, d.runs.written));
            p.install = d.install;
            p.pythonpath.extend(d.pythonpath.clone());
            p.test_cmd = Some(cmd);
            break;
        }
    }
    // Without a workflow, a `hatch test` environment still says what the tests need.
    if p.deps.is_none()
        && let Some(d) = super::ci_deps::hatch_deps(files, "hatch-test")
    {
        p.notes
            .push(format!("test dependencies from the {}", d.source));
        p.deps = Some(d);
    }
    let mut seen = Vec::new();
    p.pythonpath.retain(|d| {
        let new = !seen.contains(d);
        seen.push(d.clone());
        new
    });
    if let Some(i) = p.install {
        p.notes.push(format!(
            "install mode: {}",
            match i {
                Install::Checkout => "tests run from the checkout",
                Install::Editable => "editable install",
                Install::Built => "built install",
            }
        ));
    }
    if let Some(d) = &p.deps {
        p.notes.push(format!("test dependencies from {}", d.source));
    }
    let (requires, classifiers) = metadata(files);
    p.python = choose_python(&ci_versions, requires.as_deref(), &classifiers);
    if let Some((v, from)) = &p.python {
        p.notes.push(format!("Python {v} (from {from})"));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    /// What the plan's test command finally runs, as written there.
    fn runs(p: &CiPlan) -> Option<String> {
        let mut at = p.test_cmd.as_ref()?;
        while let Some(r) = &at.runs {
            at = r;
        }
        Some(at.written.clone())
    }

    const MATRIX_WORKFLOW: &str = r#"
name: tests
on: [push, pull_request]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4
      - run: pip install ruff && ruff check .
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.9", "3.10", "3.11", "3.12", "3.13"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - name: Install
        run: |
          python -m pip install --upgrade pip
          python -m pip install pytest==7.2.1
      - name: Test
        run: python -m pytest -q tests
        env:
          PYTHONPATH: src
"#;

    #[test]
    fn a_workflow_that_runs_a_unittest_package_main_runs_pytest_on_that_package() {
        // lark: `python -m tests`, its tests/__main__.py a unittest.main() over its test files.
        let wf = "jobs:\n  build:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pip install -e .\n      - run: python -m tests\n";
        let main = "import unittest\nfrom .test_parser import *\nif __name__ == '__main__':\n    unittest.main()\n";
        let f = files(&[
            (".github/workflows/tests.yml", wf),
            ("tests/__main__.py", main),
        ]);
        let p = plan(&f);
        assert!(
            p.test_cmd.as_ref().is_some_and(|c| c.runs_pytest()),
            "{p:?}"
        );
        assert_eq!(
            runs(&p).as_deref(),
            Some("python -m pytest -o python_files=test*.py tests/test_parser.py")
        );
    }

    #[test]
    fn a_test_runner_other_than_pytest_and_unittest_is_the_test_step() {
        // testtools: its own `testtools.run` given a suite's dotted name; the job's install
        // line names the extras the tests import (Twisted).
        let wf = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: |\n          python -m pip install sphinx\n          python -m pip install \".[test,twisted,dev]\"\n      - run: python -W once -m testtools.run tests.test_suite\n";
        let p = plan(&files(&[(".github/workflows/test.yml", wf)]));
        assert!(
            p.test_cmd.as_ref().is_some_and(|c| c.runs_pytest()),
            "{p:?}"
        );
        let deps = p.deps.expect("the job's install line");
        assert_eq!(
            deps.extras,
            vec!["test", "twisted", "dev"],
            "{}",
            deps.source
        );
        // A justfile recipe: its dependencies' install lines say what the tests need.
        let wf = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: just test cpy314\n";
        let jf = "test venv=\"\": (install venv)\n    \"${VENV_PATH}/bin/pytest\"\n\ninstall venv=\"\":\n    .venvs/{{ venv }}/bin/python -m pip install .[all]\n";
        let p = plan(&files(&[
            (".github/workflows/test.yml", wf),
            ("justfile", jf),
        ]));
        assert_eq!(runs(&p).as_deref(), Some("pytest"), "{p:?}");
        let deps = p.deps.expect("the recipe's install line");
        assert_eq!(deps.extras, vec!["all"], "{}", deps.source);
        assert!(
            deps.source.contains("justfile recipe `test`"),
            "{}",
            deps.source
        );
        for line in [
            "python -m simplejson.tests._cibw_runner .",
            "python -bb -m pyfakefs.tests.all_tests",
            "trial tests",
            "python -m twisted.trial pkg",
            "just test cpy314",
            "stestr run",
            "zope-testrunner --test-path=src",
        ] {
            assert!(is_test_cmd(line), "{line}");
        }
        for line in [
            "python -m build",
            "python -m pip install tests",
            "just lint",
            "python setup.py sdist",
        ] {
            assert!(!is_test_cmd(line), "{line}");
        }
    }

    #[test]
    fn a_nox_session_that_runs_no_tests_is_not_the_test_step() {
        // particle: cd.yml (sorted first) builds a zipapp with nox; ci.yml runs the tests.
        let cd = "jobs:\n  zipapp:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pipx run nox -s zipapp\n";
        let ci = "jobs:\n  tests:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pipx run nox -s tests\n";
        let nox = "import nox\n\n@nox.session\ndef zipapp(session):\n    session.install(\"shiv\")\n    session.run(\"shiv\", \"-o\", \"particle.pyz\", \".\")\n\n@nox.session\ndef tests(session):\n    session.install(\"-e\", \".[test]\")\n    session.run(\"pytest\", \"--cov=src/particle\")\n";
        let f = files(&[
            (".github/workflows/cd.yml", cd),
            (".github/workflows/ci.yml", ci),
            ("noxfile.py", nox),
        ]);
        let p = plan(&f);
        assert_eq!(
            runs(&p).as_deref(),
            Some("pytest --cov=src/particle"),
            "{p:?}"
        );
        assert_eq!(p.install, Some(Install::Editable));
        // Without the noxfile nothing says what the session runs: the line stays the step.
        let f = files(&[(".github/workflows/cd.yml", cd)]);
        assert_eq!(
            plan(&f).test_cmd.map(|c| c.written).as_deref(),
            Some("pipx run nox -s zipapp")
        );
    }

    #[test]
    fn the_workflow_env_around_the_test_step_reaches_the_command() {
        // termcolor: `env: FORCE_COLOR: 1` at the top decides what its tests expect.
        let wf = r#"
env:
  FORCE_COLOR: 1
  LANG: C
jobs:
  test:
    runs-on: ubuntu-latest
    env:
      TZ: "Europe/Paris"
      LANG: C.UTF-8
    steps:
      - run: pip install tox
      - run: MODE=fast ./runtests.sh
        env:
          TOKEN: ${{ secrets.TOKEN }}
          MODE: slow
          COLORS: "a b 'c'"
          DEBUG: true
          PATH: /opt/runner/bin
          GITHUB_STEP_SUMMARY: /tmp/s
"#;
        let p = plan(&files(&[(".github/workflows/ci.yml", wf)]));
        let cmd = p.test_cmd.clone().unwrap();
        let names: Vec<&str> = cmd.env.iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(
            names,
            ["FORCE_COLOR", "TZ", "LANG", "COLORS", "DEBUG", "MODE"],
            "{p:?}"
        );
        assert!(p.notes.iter().any(|n| n.contains("FORCE_COLOR")), "{p:?}");
        // What a shell does with the rendered command: the step's values, the line's own
        // assignment over the step's, no secret expression.
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("runtests.sh");
        std::fs::write(
            &script,
            "#!/bin/sh\nprintf '%s|' \"$FORCE_COLOR\" \"$LANG\" \"$TZ\" \"$COLORS\" \"$DEBUG\" \"$MODE\" \"${TOKEN-unset}\"\n",
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let ws = dir.path().to_string_lossy().to_string();
        let line = cmd.shell(&crate::testcmd::Run {
            workspace: &ws,
            options: &[],
            selection: &[],
        });
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(&line)
            .current_dir(dir.path())
            .env_remove("TOKEN")
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            "1|C.UTF-8|Europe/Paris|a b 'c'|true|fast|unset|",
            "{line}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }

    #[test]
    fn a_tox_env_that_cannot_be_read_still_tests_an_installed_package() {
        let wf = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: pip install tox\n      - run: tox -e py310\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("tox.ini", "[testenv]\ncommands = {env:RUNNER}\n"),
        ]));
        assert_eq!(p.install, Some(Install::Built), "{p:?}");
        let wf = wf.replace("tox -e py310", "python -m pytest");
        let p = plan(&files(&[(".github/workflows/ci.yml", wf.as_str())]));
        assert_eq!(p.install, Some(Install::Checkout), "{p:?}");
    }

    #[test]
    fn env_runners_test_the_synced_project_and_hatch_envs_name_the_deps() {
        // iniconfig 2.3: `uv run --with dist/*.whl --with pytest pytest testing`.
        let wf = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - run: uv run --with dist/*.whl --with pytest pytest testing --color=yes\n";
        let p = plan(&files(&[(".github/workflows/test.yml", wf)]));
        assert_eq!(p.install, Some(Install::Editable), "{p:?}");
        // python-ulid 3.0: `hatch test`, its environment in hatch.toml.
        let hatch = "[envs.hatch-test]\nextra-dependencies = [\"freezegun==1.5.*\"]\n";
        let wf = wf.replace(
            "uv run --with dist/*.whl --with pytest pytest testing --color=yes",
            "hatch test --cover --python 3.11",
        );
        let p = plan(&files(&[
            (".github/workflows/test.yml", wf.as_str()),
            ("hatch.toml", hatch),
        ]));
        let d = p.deps.expect("hatch deps");
        assert!(
            d.requirements.contains(&"freezegun==1.5.*".to_string()),
            "{d:?}"
        );
        // No workflow at all: the hatch-test environment still names them.
        let p = plan(&files(&[("hatch.toml", hatch)]));
        assert!(
            p.deps
                .is_some_and(|d| d.requirements.iter().any(|r| r.starts_with("freezegun")))
        );
    }

    #[test]
    fn uv_installs_the_default_groups_and_what_its_options_name() {
        // dirty-equals 0.10: `make test` runs `TZ=utc uv run coverage run -m pytest`; the
        // tests need pydantic, which only the `dev` group (uv's default) names.
        let wf = "jobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: astral-sh/setup-uv@v6\n      - run: make test\n";
        let make = "test:\n\tTZ=utc uv run coverage run -m pytest\n\tuv run tests/mypy_checks.py\n";
        let py = "[project]\nname = 'de'\noptional-dependencies = {pydantic = ['pydantic>=2']}\n\n[dependency-groups]\ndev = ['pydantic>=2.10', 'pytest']\ndocs = ['mkdocs']\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("Makefile", make),
            ("pyproject.toml", py),
        ]));
        let d = p.deps.clone().expect("uv's environment");
        assert_eq!(d.extras, vec!["dev"], "{d:?}");
        assert!(
            d.source.starts_with("uv's project environment"),
            "{}",
            d.source
        );
        assert_eq!(p.install, Some(Install::Editable), "{p:?}");
        // Options add and take away, per invocation; `uv sync` before the test line counts.
        let py = "[project]\nname = 'x'\n[project.optional-dependencies]\na = ['six']\nb = ['attrs']\n[dependency-groups]\ndev = ['pytest']\nlint = ['ruff']\ntest = ['hypothesis']\n[tool.uv]\ndefault-groups = ['dev', 'lint']\n";
        let wf = "jobs:\n  test:\n    steps:\n      - run: uv sync --all-extras --no-dev\n      - run: uv run --group test --no-group=lint --with 'pytest-mock,freezegun>=1' pytest -x\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("pyproject.toml", py),
        ]));
        let d = p.deps.clone().expect("uv's environment");
        let got: std::collections::BTreeSet<&str> = d.extras.iter().map(String::as_str).collect();
        assert_eq!(
            got,
            std::collections::BTreeSet::from(["lint", "a", "b", "dev", "test"]),
            "{d:?}"
        );
        assert_eq!(d.requirements, vec!["pytest-mock", "freezegun>=1"], "{d:?}");
        assert_eq!(runs(&p).as_deref(), Some("pytest -x"));
        // uv's older `[tool.uv] dev-dependencies` is the `dev` group.
        let legacy = "[project]\nname = 'x'\n[tool.uv]\ndev-dependencies = ['pytest']\n";
        let wf = "jobs:\n  test:\n    steps:\n      - run: uv run pytest\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("pyproject.toml", legacy),
        ]));
        assert_eq!(p.deps.map(|d| d.extras), Some(vec!["dev".to_string()]));
        // No such group: nothing from uv, so the project's own test metadata decides.
        let bare = "[project]\nname = 'x'\n[project.optional-dependencies]\ntest = ['pytest']\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("pyproject.toml", bare),
        ]));
        assert_eq!(p.deps, None);
    }

    #[test]
    fn poetry_installs_its_non_optional_groups_and_what_its_options_name() {
        let py = "[tool.poetry]\nname = 'x'\n[tool.poetry.dependencies]\npython = '^3.9'\nujson = { version = '^5', optional = true }\n[tool.poetry.extras]\nfast = ['ujson']\n[tool.poetry.group.test.dependencies]\npytest-mock = '^3'\n[tool.poetry.group.docs]\noptional = true\n[tool.poetry.group.docs.dependencies]\nsphinx = '*'\n[tool.poetry.group.lint.dependencies]\nruff = '*'\n";
        // tinydb's shape: `poetry install` in one step, `poetry run pytest` in the next.
        let wf = "jobs:\n  test:\n    steps:\n      - run: poetry install\n      - run: poetry run py.test -v\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("pyproject.toml", py),
        ]));
        let d = p.deps.clone().expect("poetry's environment");
        assert_eq!(d.extras, vec!["lint", "test"], "{d:?}");
        assert_eq!(d.locks, vec!["poetry.lock"]);
        assert!(d.source.starts_with("poetry's environment"), "{}", d.source);
        // Options: an optional group and an extra in, a group out.
        let wf = wf.replace(
            "poetry install\n",
            "poetry install --with docs --without=lint -E fast\n",
        );
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf.as_str()),
            ("pyproject.toml", py),
        ]));
        assert_eq!(
            p.deps.map(|d| d.extras),
            Some(vec!["test".into(), "docs".into(), "fast".into()])
        );
        // `poetry run` with no install line: the default install.
        let wf = "jobs:\n  test:\n    steps:\n      - run: poetry run pytest\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("pyproject.toml", py),
        ]));
        assert_eq!(
            p.deps.map(|d| d.extras),
            Some(vec!["lint".into(), "test".into()])
        );
        // The older `[tool.poetry.dev-dependencies]` is the `dev` group; `--only main` is
        // the project alone.
        let legacy = "[tool.poetry]\nname = 'x'\n[tool.poetry.dev-dependencies]\npytest = '^7'\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("pyproject.toml", legacy),
        ]));
        assert_eq!(p.deps.map(|d| d.extras), Some(vec!["dev".into()]));
        let only = "jobs:\n  test:\n    steps:\n      - run: poetry install --only main\n      - run: poetry run pytest\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", only),
            ("pyproject.toml", legacy),
        ]));
        assert_eq!(p.deps, None);
    }

    #[test]
    fn pdm_installs_its_dev_groups_unless_told_otherwise() {
        // marko's shape: `[tool.pdm.dev-dependencies]` groups, `pdm run pytest`.
        let py = "[project]\nname = 'x'\n[project.optional-dependencies]\ncli = ['click']\n[tool.pdm.dev-dependencies]\ntest = ['pytest-cov']\ndoc = ['sphinx']\n[dependency-groups]\nlint = ['ruff']\n";
        let wf = "jobs:\n  test:\n    steps:\n      - run: pdm install\n      - run: pdm run -v pytest tests\n";
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf),
            ("pyproject.toml", py),
        ]));
        let d = p.deps.clone().expect("pdm's environment");
        let got: std::collections::BTreeSet<&str> = d.extras.iter().map(String::as_str).collect();
        assert_eq!(
            got,
            std::collections::BTreeSet::from(["test", "doc", "lint"]),
            "{d:?}"
        );
        assert_eq!(d.locks, vec!["pdm.lock"]);
        assert_eq!(runs(&p).as_deref(), Some("pytest tests"));
        // `-G` selects (an extra too), `--without` drops, `--prod` installs no group.
        for (install, want) in [
            ("pdm install -G test -G cli", vec!["test", "cli"]),
            (
                "pdm install -G :all --without doc",
                vec!["test", "lint", "cli"],
            ),
            ("pdm sync --group=test,lint", vec!["test", "lint"]),
        ] {
            let wf = wf.replace("pdm install", install);
            let p = plan(&files(&[
                (".github/workflows/ci.yml", wf.as_str()),
                ("pyproject.toml", py),
            ]));
            let got: Vec<String> = p.deps.map(|d| d.extras).unwrap_or_default();
            let mut got: Vec<&str> = got.iter().map(String::as_str).collect();
            let mut want = want.clone();
            got.sort();
            want.sort();
            assert_eq!(got, want, "{install}");
        }
        let wf = wf.replace("pdm install", "pdm install --prod");
        let p = plan(&files(&[
            (".github/workflows/ci.yml", wf.as_str()),
            ("pyproject.toml", py),
        ]));
        assert_eq!(p.deps, None);
    }

    #[test]
    fn workflow_without_project_install_runs_from_the_checkout() {
        let p = plan(&files(&[
            (".github/workflows/ci.yml", MATRIX_WORKFLOW),
            (
                "pyproject.toml",
                "[project]\nname = \"x\"\nrequires-python = \">=3.9,<3.13\"\n",
            ),
        ]));
        assert_eq!(p.install, Some(Install::Checkout));
        assert_eq!(p.pythonpath, vec!["src"]);
        assert_eq!(runs(&p).as_deref(), Some("python -m pytest -q tests"));
        // The test job's own install line, not the lint job's ruff.
        let deps = p.deps.clone().unwrap();
        assert_eq!(deps.requirements, vec!["pytest==7.2.1"]);
        assert!(deps.source.contains("ci.yml"), "{}", deps.source);
        // 3.13 is in the matrix but requires-python excludes it.
        assert_eq!(
            p.python,
            Some(("3.12".into(), "actions/setup-python python-version".into()))
        );
        assert!(
            p.notes.iter().any(|n| n.contains("ci.yml")),
            "{:?}",
            p.notes
        );
    }

    #[test]
    fn editable_and_built_installs() {
        let wf = |install: &str| {
            format!(
                "jobs:\n  t:\n    steps:\n      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.11'\n      - run: |\n          {install}\n          pytest\n"
            )
        };
        for (line, want) in [
            ("pip install -e .[test]", Install::Editable),
            ("python -m pip install --editable .", Install::Editable),
            ("poetry install", Install::Editable),
            ("pdm install -G test", Install::Editable),
            ("uv sync --all-extras", Install::Editable),
            ("pip install .[tests]", Install::Built),
            ("pip install dist/*.whl", Install::Built),
            ("pip install -r requirements.txt", Install::Checkout),
        ] {
            let p = plan(&files(&[(".github/workflows/t.yaml", &wf(line))]));
            assert_eq!(p.install, Some(want), "{line}");
            assert_eq!(runs(&p).as_deref(), Some("pytest"), "{line}");
            assert_eq!(p.python.as_ref().map(|v| v.0.as_str()), Some("3.11"));
        }
    }

    #[test]
    fn tox_env_resolved_through_tox_ini() {
        let wf =
            "jobs:\n  t:\n    steps:\n      - run: pip install tox\n      - run: tox -e py311\n";
        let tox = "[tox]\nenvlist = py311\n\n[testenv]\ndeps = pytest\ncommands =\n    python -m pip list\n    pytest {posargs} tests\n\n[testenv:py311]\nusedevelop = true\nsetenv =\n    PYTHONPATH = {toxinidir}/src\n";
        let p = plan(&files(&[(".github/workflows/t.yml", wf), ("tox.ini", tox)]));
        assert_eq!(runs(&p).as_deref(), Some("PYTHONPATH=src pytest tests"));
        assert!(p.test_cmd.as_ref().unwrap().runs_pytest());
        assert_eq!(p.install, Some(Install::Editable));
        assert_eq!(p.pythonpath, vec!["src"]);
        // The env's deps, not the workflow's `pip install tox`.
        let deps = p.deps.unwrap();
        assert_eq!(deps.requirements, vec!["pytest"]);
        assert!(
            deps.source.starts_with("tox.ini [testenv:py311]"),
            "{}",
            deps.source
        );
        // Without the env's usedevelop: tox builds and installs the package.
        let p = plan(&files(&[(
            "tox.ini",
            &tox.replace("usedevelop = true\n", ""),
        )]));
        assert_eq!(p.install, Some(Install::Built));
        let p = plan(&files(&[(
            "tox.ini",
            "[testenv]\nskip_install = true\ncommands = pytest\n",
        )]));
        assert_eq!(p.install, Some(Install::Checkout));
    }

    #[test]
    fn nox_and_make() {
        let nox = "import nox\n\n@nox.session(python=[\"3.10\", \"3.11\"])\ndef tests(session):\n    session.install(\"-e\", \".[test]\")\n    session.run(\"pytest\", \"-q\", \"tests\")\n";
        let wf = "jobs:\n  t:\n    steps:\n      - run: pipx run nox -s tests\n";
        let p = plan(&files(&[
            (".github/workflows/t.yml", wf),
            ("noxfile.py", nox),
        ]));
        assert_eq!(runs(&p).as_deref(), Some("pytest -q tests"));
        assert_eq!(p.install, Some(Install::Editable));

        let mk = "PYTHON ?= python\n\ninstall:\n\t$(PYTHON) -m pip install .\n\ntest: install\n\t@$(PYTHON) -m pytest -x tests\n";
        let wf = "jobs:\n  t:\n    steps:\n      - run: pip install .\n      - run: make test\n";
        let p = plan(&files(&[(".github/workflows/t.yml", wf), ("Makefile", mk)]));
        assert_eq!(runs(&p).as_deref(), Some("python -m pytest -x tests"));
        assert_eq!(p.install, Some(Install::Built));
    }

    #[test]
    fn python_from_metadata_when_no_ci() {
        let cfg = "[metadata]\nclassifiers =\n    Programming Language :: Python :: 3.8\n    Programming Language :: Python :: 3.10\n\n[options]\npython_requires = >=3.8\n";
        let p = plan(&files(&[("setup.cfg", cfg)]));
        assert_eq!(p.python, Some(("3.10".into(), "classifiers".into())));
        assert_eq!(p.install, None);
        let py = "setup(name='x', python_requires='>=3.7', classifiers=['Programming Language :: Python :: 3.7', 'Programming Language :: Python :: 3.12'])";
        assert_eq!(
            plan(&files(&[("setup.py", py)])).python,
            Some(("3.12".into(), "classifiers".into()))
        );
        let py = py.replace(">=3.7", ">=3.7,<3.12");
        assert_eq!(
            plan(&files(&[("setup.py", &py)])).python.map(|p| p.0),
            Some("3.7".into())
        );
        assert_eq!(plan(&BTreeMap::new()), CiPlan::default());
    }

    #[test]
    fn requires_python_clauses() {
        assert!(allowed(">=3.8", (3, 11)));
        assert!(!allowed(">=3.12", (3, 11)));
        assert!(allowed(">=3.8,<4", (3, 13)));
        assert!(!allowed(">=3.8, <3.11", (3, 11)));
        assert!(allowed("~=3.9", (3, 12)));
        assert!(!allowed("!=3.11.*", (3, 11)));
        assert!(allowed("!=3.0.*,!=3.1.*", (3, 11)));
        assert_eq!(
            choose_python(&["3.x".into(), "pypy3.9".into()], None, &[]),
            None
        );
    }

    #[test]
    fn pythonpath_spellings() {
        assert_eq!(
            split_pythonpath("${{ github.workspace }}/src:.:$PYTHONPATH"),
            vec!["src", "."]
        );
        assert!(wanted(".github/workflows/ci.yml"));
        assert!(!wanted(".github/workflows/sub/ci.yml"));
        assert!(!wanted(".github/dependabot.yml"));
        assert!(wanted("tests/__main__.py"));
        assert!(!wanted("__main__.py") && !wanted("src/pkg/__main__.py"));
    }
}
