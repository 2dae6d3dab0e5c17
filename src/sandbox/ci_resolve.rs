//! What a delegating test command runs, read from the repository's files (pure): a tox env's
//! `commands` (with its `setenv` and `changedir`), a nox session's `session.run`, a Makefile
//! target's recipe, a hatch or pdm script. The result is filled into the typed command
//! ([`TestCommand::runs`]), so every consumer renders what finally runs — in the sandbox, where
//! tox and nox could not build their environments (no network), the image already holds them.

use std::collections::{BTreeMap, BTreeSet};

use super::ci_text::{call_args, ini};
use crate::testcmd::words::quote_if_needed;
use crate::testcmd::{Launcher, TestCommand, Word};

/// How CI makes the project importable for its tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Install {
    /// Tests run from the checkout (nothing installs the project; `PYTHONPATH` at most).
    Checkout,
    /// `pip install -e .`, `poetry install`, tox `usedevelop`, `setup.py develop`.
    Editable,
    /// `pip install .`, a built wheel or sdist, tox's default package install.
    Built,
}

/// A delegation followed: what runs, how the delegate installs the project, what it puts on
/// `PYTHONPATH`, and where it was read.
#[derive(Debug, Clone)]
pub struct Delegation {
    pub runs: TestCommand,
    pub install: Option<Install>,
    pub pythonpath: Vec<String>,
    pub note: String,
    /// Install lines the delegate runs before its test line (the recipes a justfile recipe
    /// depends on): evidence of what the tests need, read like the job's own.
    pub before: Vec<String>,
}

/// Whether a command line runs tests (the caller's predicate, `ci::is_test_cmd`).
pub type IsTest<'a> = &'a dyn Fn(&str) -> bool;

/// Fills in what `cmd` (and what it runs, level by level) delegates to, when the files say.
/// `python`: the CI's Python version, for tox's `[gh-actions]` mapping.
pub fn resolve(
    mut cmd: TestCommand,
    files: &BTreeMap<String, String>,
    python: Option<&str>,
    is_test: IsTest,
) -> (TestCommand, Option<Delegation>) {
    if let Some(inner) = cmd.runs.take() {
        let (inner, d) = resolve(*inner, files, python, is_test);
        cmd.runs = Some(Box::new(inner));
        let d = d.or_else(|| runner_package(&cmd, files));
        return (cmd, d);
    }
    let d = match &cmd.launcher {
        Launcher::Tox => tox(&cmd, files, python, is_test),
        Launcher::Nox => nox(&cmd, files, is_test),
        Launcher::Make => make(&cmd, files, is_test),
        Launcher::Just => just(&cmd, files, is_test),
        Launcher::EnvRunner { tool } if tool == "hatch run" || tool == "pdm run" => {
            script(&cmd, tool, files)
        }
        Launcher::EnvRunner { tool } if tool == "poe" => poe(&cmd, files, is_test),
        Launcher::EnvRunner { tool } if tool == "pixi run" => pixi(&cmd, files, is_test),
        Launcher::Script { path } => shell_script(path, files, is_test),
        Launcher::Python => django_test(&cmd, files)
            .or_else(|| setup_py_test(&cmd, files))
            .or_else(|| doctest_main(&cmd, files))
            .or_else(|| unittest_main_package(&cmd, files))
            .or_else(|| unittest_script(&cmd, files)),
        _ => None,
    };
    match d {
        Some(mut d) => {
            // What the delegate runs may be a Python runner read from its source (a tox env's
            // `coverage run tests/manage.py test`): followed too, its needs added to the
            // delegate's.
            if d.runs.levels().any(|l| l.launcher == Launcher::Python) {
                let (runs, inner) = resolve(d.runs.clone(), files, python, is_test);
                d.runs = runs;
                // Its note is on its own level (`via`), which the command's description reads.
                if let Some(i) = inner {
                    d.before.extend(i.before);
                    d.pythonpath.extend(i.pythonpath);
                }
            }
            cmd.runs = Some(Box::new(d.runs.clone()));
            cmd.via = Some(d.note.clone());
            (cmd, Some(d))
        }
        None => (cmd, None),
    }
}

/// A unittest runner whose own test-case API the tests import (`from twisted.trial.unittest
/// import TestCase`, `from nose2.tools import params`), run by pytest in its place: its
/// package is a test dependency, as the job's own `pip install twisted` said where there is
/// one — unless the project is that package (Twisted's own suite).
fn runner_package(cmd: &TestCommand, files: &BTreeMap<String, String>) -> Option<Delegation> {
    let runner = cmd.via.as_deref()?;
    let package = [
        ("`twisted.trial`", "twisted"),
        ("`trial`", "twisted"),
        ("`nose2`", "nose2"),
    ]
    .into_iter()
    .find_map(|(r, p)| runner.contains(r).then_some(p))?;
    let named = |text: &str| {
        regex::Regex::new(&format!(
            r#"(?mi)^\s*name\s*=\s*['"]?{package}['"]?\s*,?\s*$"#
        ))
        .expect("a valid pattern")
        .is_match(text)
    };
    if ["pyproject.toml", "setup.cfg", "setup.py"]
        .iter()
        .filter_map(|f| files.get(*f))
        .any(|t| named(t))
    {
        return None;
    }
    Some(Delegation {
        runs: cmd.runs.as_deref()?.clone(),
        install: None,
        pythonpath: Vec::new(),
        before: vec![format!("python -m pip install {package}")],
        note: format!("{runner}, whose package `{package}` the tests import"),
    })
}

fn truthy(v: Option<&String>) -> bool {
    v.is_some_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "true" | "1" | "yes"))
}

/// The value of `-e ENV` / `--envlist ENV` / `-s SESSION` among a launcher's arguments.
fn flag_value(args: &[Word], flags: &[&str]) -> Option<String> {
    let mut it = args.iter();
    while let Some(w) = it.next() {
        let t = w.text();
        if flags.contains(&t) {
            return it.next().and_then(|v| v.value.clone());
        }
        for f in flags.iter().filter(|f| f.len() == 2) {
            if let Some(v) = t.strip_prefix(f)
                && !v.is_empty()
                && !v.starts_with('-')
            {
                return w.value.as_ref().map(|_| v.to_string());
            }
        }
        if t == "--" {
            break;
        }
    }
    None
}

/// tox substitutions in a `commands` line, innermost first (`{posargs:src/{env:PY_MODULE}}`):
/// `{posargs:default}` → default, `{posargs}` and `{envsitepackagesdir}`-like paths dropped,
/// `{env:NAME:default}` → the env's `setenv` value (`vars`), else the default, `{toxinidir}` →
/// the checkout, `{envpython}` → python.
fn tox_line(line: &str, vars: &BTreeMap<String, String>) -> String {
    // Substitutions kept for the word pass below are parked between these two characters so
    // the loop does not see them again.
    const OPEN: char = '\u{1}';
    const CLOSE: char = '\u{2}';
    let innermost = regex::Regex::new(r"\{([^{}]*)\}").expect("a valid pattern");
    let mut out = line.to_string();
    // Bounded: a variable whose value names itself would substitute forever.
    for _ in 0..64 {
        let Some(m) = innermost.captures(&out) else {
            break;
        };
        let whole = m.get(0).expect("group 0").range();
        let inner = m[1].to_string();
        let with = match inner.split_once(':') {
            Some(("posargs", default)) => default.to_string(),
            Some(("env", rest)) => {
                let (name, default) = rest.split_once(':').unwrap_or((rest, ""));
                vars.get(name)
                    .cloned()
                    .unwrap_or_else(|| default.to_string())
            }
            _ => match inner.as_str() {
                "posargs" => String::new(),
                "envpython" => "python".to_string(),
                "toxinidir" => ".".to_string(),
                other => format!("{OPEN}{other}{CLOSE}"),
            },
        };
        out.replace_range(whole, &with);
    }
    let out = out.replace(OPEN, "{").replace(CLOSE, "}");
    // A path in the tox env (`--basetemp={envtmpdir}`, `{envbindir}/pytest`): nothing of it
    // exists here, so the word goes, and an option whose value it was goes with it.
    let env_path = |w: &str| {
        [
            "{envbindir}",
            "{envdir}",
            "{envsitepackagesdir}",
            "{envtmpdir}",
            "{toxworkdir}",
            "{envlogdir}",
        ]
        .iter()
        .any(|p| w.contains(p))
    };
    let words: Vec<&str> = out.split_whitespace().collect();
    let mut kept: Vec<&str> = Vec::new();
    for w in words {
        // A program of the tox env (`{envbindir}/coverage run …`) is the image's own: run by
        // name, or as a module where a Python runs its script (`python -Wd {envbindir}/coverage`).
        if let Some(prog) = w.strip_prefix("{envbindir}/").filter(|p| {
            !p.is_empty() && p.chars().all(|c| c.is_alphanumeric() || "._-".contains(c))
        }) {
            let under_python = kept.first().is_some_and(|p| p.starts_with("python"))
                && kept[1..].iter().all(|o| o.starts_with('-'));
            if under_python {
                kept.push("-m");
            }
            kept.push(prog);
            continue;
        }
        if env_path(w) {
            if kept
                .last()
                .is_some_and(|p| p.starts_with('-') && !p.contains('='))
            {
                kept.pop();
            }
            continue;
        }
        kept.push(w);
    }
    kept.join(" ")
}

fn tox(
    cmd: &TestCommand,
    files: &BTreeMap<String, String>,
    python: Option<&str>,
    is_test: IsTest,
) -> Option<Delegation> {
    let (from, text) = super::ci_deps::tox_config(files)?;
    let conf = ini(&text);
    // The envs the command names: `-e a,b`, a label (`-m ci`), factors (`-f py311-tests`),
    // else what the config and the CI's Python choose.
    let envs: Vec<String> = match (
        flag_value(cmd.args(), &["-e", "--envlist"]),
        flag_value(cmd.args(), &["-m", "--labels"]),
        flag_value(cmd.args(), &["-f", "--factors"]),
    ) {
        (Some(e), _, _) => e.split(',').map(|e| e.trim().to_string()).collect(),
        (None, Some(label), _) => tox_label(&conf, &label),
        (None, None, Some(f)) => {
            let want: Vec<&str> = f.split('-').collect();
            tox_envs(&conf)
                .into_iter()
                .filter(|e| want.iter().all(|w| e.split('-').any(|p| p == *w)))
                .collect()
        }
        _ => Vec::new(),
    };
    let envs: Vec<Option<String>> = if envs.is_empty() {
        vec![super::ci_deps::tox_env("tox", &conf, python)]
    } else {
        envs.into_iter()
            .filter(|e| !e.is_empty() && !e.contains('$'))
            .map(Some)
            .collect()
    };
    // The first of them whose commands run tests.
    envs.into_iter()
        .find_map(|env| tox_env_delegation(&conf, &from, env, is_test))
}

/// Every env the config names (`envlist`, `[testenv:NAME]` sections), in that order.
fn tox_envs(conf: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<String> {
    let mut out: Vec<String> = conf
        .get("tox")
        .or_else(|| conf.get("tox:tox"))
        .and_then(|t| t.get("envlist"))
        .map(|l| super::ci_deps::expand_envlist(l))
        .unwrap_or_default();
    for k in conf.keys() {
        if let Some(e) = k.strip_prefix("testenv:")
            && !out.iter().any(|o| o == e)
        {
            out.push(e.to_string());
        }
    }
    out
}

/// The envs a tox 4 label names: `[tox] labels = ci = a, b`, else envs with `labels = ci`.
fn tox_label(conf: &BTreeMap<String, BTreeMap<String, String>>, label: &str) -> Vec<String> {
    let top = conf.get("tox").or_else(|| conf.get("tox:tox"));
    if let Some(map) = top.and_then(|t| t.get("labels")) {
        for l in map.lines() {
            if let Some((k, v)) = l.split_once('=')
                && k.trim() == label
            {
                return super::ci_deps::expand_envlist(v);
            }
        }
    }
    tox_envs(conf)
        .into_iter()
        .filter(|e| {
            conf.get(&format!("testenv:{e}"))
                .and_then(|s| s.get("labels"))
                .is_some_and(|l| l.split([',', '\n', ' ']).any(|x| x.trim() == label))
        })
        .collect()
}

/// One tox env's test command, with its setenv, changedir and install mode.
fn tox_env_delegation(
    conf: &BTreeMap<String, BTreeMap<String, String>>,
    from: &str,
    env: Option<String>,
    is_test: IsTest,
) -> Option<Delegation> {
    let mut merged = conf.get("testenv").cloned().unwrap_or_default();
    if let Some(e) = &env
        && let Some(s) = conf.get(&format!("testenv:{e}"))
    {
        merged.extend(s.clone());
    }
    let factors: Vec<&str> = env
        .as_deref()
        .map(|e| e.split('-').collect())
        .unwrap_or_default();
    // `setenv` values, for `{env:NAME}` in the commands; a factor-conditional line
    // (`coverage: NAME=…`) only for an env with those factors.
    let setenv: Vec<String> = merged
        .get("setenv")
        .map(|v| super::ci_deps::substitute(v, conf, 2))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| for_factors(l.trim(), &factors))
        .map(str::to_string)
        .collect();
    let vars: BTreeMap<String, String> = setenv
        .iter()
        .filter_map(|l| l.split_once('='))
        .filter(|(k, _)| !k.trim().is_empty())
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    // One command per line; a trailing `\` continues it on the next.
    let mut commands: Vec<String> = Vec::new();
    for l in merged.get("commands")?.lines().map(str::trim) {
        match commands.last_mut() {
            Some(prev) if prev.ends_with('\\') => {
                prev.pop();
                prev.push(' ');
                prev.push_str(l);
            }
            _ => commands.push(l.to_string()),
        }
    }
    // The env's test lines; the suite is the one that takes `{posargs}` when there are several
    // (natsort runs doctests of its docs first: `pytest README.rst docs/examples.rst`).
    let test_lines: Vec<(bool, String)> = commands
        .iter()
        .map(|l| l.as_str())
        .filter_map(|l| {
            let l = for_factors(l, &factors)?;
            // Judged as substituted: `{posargs:pytest tests}` runs `pytest tests`.
            let line = tox_line(l, &vars);
            is_test(&line).then(|| (l.contains("{posargs"), line))
        })
        .collect();
    let test_line = test_lines
        .iter()
        .find(|(posargs, _)| *posargs)
        .or(test_lines.first())
        .map(|(_, l)| l.clone())?;
    let mut runs = TestCommand::parse(&test_line).ok()?;
    let install = if truthy(merged.get("skip_install")) {
        Install::Checkout
    } else if truthy(merged.get("usedevelop")) {
        Install::Editable
    } else {
        Install::Built
    };
    let mut pythonpath = Vec::new();
    let raw_setenv = merged.get("setenv").map(String::as_str).unwrap_or("");
    for l in raw_setenv
        .lines()
        .filter_map(|l| for_factors(l.trim(), &factors))
    {
        let Some((k, v)) = l.split_once('=') else {
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        if k == "PYTHONPATH" {
            pythonpath.extend(crate::testcmd::pythonpath_dirs(v));
        } else if !k.is_empty() && !v.contains('{') && !v.contains('$') {
            runs = runs.with_env(k, v);
        }
    }
    if !pythonpath.is_empty() {
        runs = runs.with_env("PYTHONPATH", &pythonpath.join(":"));
    }
    if let Some(dir) = merged.get("changedir") {
        let d = tox_line(dir, &vars);
        let d = d.trim_start_matches("./").trim_end_matches('/');
        // `.tox` is tox's own work dir (glom runs its suite from there against the installed
        // package): it does not exist here, where the checkout is the installed package.
        let tox_workdir = d == ".tox" || d.starts_with(".tox/");
        if !d.is_empty()
            && d != "."
            && !tox_workdir
            && !d.starts_with('/')
            && !d.contains("..")
            && !d.contains('{')
        {
            runs.cwd = Some(d.trim_start_matches("./").to_string());
        }
    }
    Some(Delegation {
        runs,
        install: Some(install),
        pythonpath,
        before: Vec::new(),
        note: format!(
            "{from} [testenv{}]",
            env.map(|e| format!(":{e}")).unwrap_or_default()
        ),
    })
}

/// A delegation that could not be read from the checkout's files (`tox` without a tox config
/// whose env runs tests, a Makefile target without a test line, a script that runs none):
/// in the sandbox the tool could not build its environment anyway, so the default
/// `python -m pytest` runs in its place, with the command's own assignments and directory, and
/// a note saying so. `None`: nothing to stand in for.
pub fn stand_in(cmd: &TestCommand) -> Option<(TestCommand, String)> {
    if !cmd.unresolved() {
        return None;
    }
    let mut c = cmd.clone();
    let at = c.innermost_mut();
    let note = format!(
        "what `{}` runs could not be read from the checkout's files; `python -m pytest` runs in its place",
        at.written
    );
    at.runs = Some(Box::new(TestCommand::python_pytest()));
    at.via = Some("a stand-in: the delegation was not found".into());
    Some((c, note))
}

/// `./ci.sh`, `bash scripts/test.sh`: the script's test line, with the `export K=V` and
/// `cd DIR` lines before it (a script that installs and uploads around its tests runs only
/// its tests here).
fn shell_script(
    path: &str,
    files: &BTreeMap<String, String>,
    is_test: IsTest,
) -> Option<Delegation> {
    let text = files.get(path)?;
    let mut env: Vec<(String, String)> = Vec::new();
    let mut cwd: Option<String> = None;
    // Directories the script creates (`mkdir empty`), checkout-relative.
    let mut made: BTreeSet<String> = BTreeSet::new();
    let join = |cwd: &Option<String>, d: &str| match cwd {
        Some(c) => format!("{c}/{d}"),
        None => d.to_string(),
    };
    // `mkdir empty; cd empty; pytest …` on one line is three statements (a line with quotes or
    // a compound command is left whole).
    let statements = text.lines().flat_map(|l| {
        let compound = l.contains(['"', '\'', '`', '$'])
            || l.split_whitespace()
                .any(|w| matches!(w, "then" | "do" | "for" | "if" | "while"));
        if compound {
            vec![l]
        } else {
            l.split(';').collect()
        }
    });
    for raw in statements {
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(rest) = l.strip_prefix("mkdir ") {
            for d in rest.split_whitespace().filter(|w| !w.starts_with('-')) {
                if !d.starts_with('/') && !d.contains("..") {
                    made.insert(join(&cwd, d.trim_end_matches('/')));
                }
            }
            continue;
        }
        if let Some(rest) = l.strip_prefix("export ") {
            if let Some((k, v)) = rest.split_once('=')
                && !v.contains('$')
            {
                env.push((
                    k.trim().to_string(),
                    v.trim().trim_matches(['"', '\'']).to_string(),
                ));
            }
            continue;
        }
        if let Some(d) = l.strip_prefix("cd ") {
            let d = d.trim().trim_matches(['"', '\'']);
            if !d.contains('$') && !d.starts_with('/') && !d.contains("..") {
                cwd = Some(join(&cwd, d.trim_end_matches('/')));
            }
            continue;
        }
        // The test part of `cmd || exit 1`, `cmd && other`.
        let part = l
            .split("||")
            .next()
            .unwrap_or(l)
            .split("&&")
            .next()
            .unwrap_or(l)
            .trim();
        if is_test(part) && !part.contains("pip install") {
            let mut runs = TestCommand::parse(part).ok()?;
            for (k, v) in env.iter().rev() {
                runs = runs.with_env(k, v);
            }
            runs.cwd = cwd.filter(|c| !c.is_empty() && c != ".");
            runs.makes_cwd = runs.cwd.as_ref().is_some_and(|c| made.contains(c));
            return Some(Delegation {
                runs,
                install: None,
                pythonpath: Vec::new(),
                before: Vec::new(),
                note: path.to_string(),
            });
        }
    }
    None
}

/// `python -m tests` where `tests/__main__.py` runs unittest itself (`unittest.main()`, a
/// `TextTestRunner`), or `python -m pkg.tests.all_tests` where that module does (pyfakefs): no
/// per-test report comes out of that, so pytest runs the test cases of the modules the runner
/// imports (what it runs), else of the whole package with unittest's file pattern
/// (`test*.py`), as for `-m unittest`. An imported name is taken for a module file (`from
/// .test_trees import …` → `tests/test_trees.py`, `from pkg.tests import (a_test, b_test)` →
/// `pkg/tests/a_test.py` …); a subpackage imported that way would be a path pytest cannot find.
fn unittest_main_package(
    cmd: &TestCommand,
    files: &BTreeMap<String, String>,
) -> Option<Delegation> {
    let module = cmd.python_module()?;
    if !module
        .chars()
        .all(|c| c.is_alphanumeric() || c == '_' || c == '.')
    {
        return None;
    }
    let dir = module.replace('.', "/");
    // A package's `__main__`, or a module of a package: what its imports are relative to.
    let (runner, package) = match files.get(&format!("{dir}/__main__.py")) {
        Some(_) => (format!("{dir}/__main__.py"), module.to_string()),
        None => (
            format!("{dir}.py"),
            module.rsplit_once('.').map_or("", |(p, _)| p).to_string(),
        ),
    };
    let main = files.get(&runner)?;
    let base = package.replace('.', "/");
    // A runner that calls its package's own unittest runner (simplejson's `_cibw_runner`:
    // `simplejson.tests.main(project_dir=…)`, a `TextTestRunner` over the package's
    // `test_*.py`): what that runs.
    let calls_package_main = !package.is_empty()
        && (main.contains(&format!("{package}.main(")) || main.contains("from . import main"))
        && files
            .get(&format!("{base}/__init__.py"))
            .is_some_and(|init| runs_unittest(init));
    if !runs_unittest(main) && !calls_package_main {
        return None;
    }
    let modules = main_imports(main, &package);
    let paths = if modules.is_empty() {
        if base.is_empty() {
            ".".to_string()
        } else {
            base.clone()
        }
    } else {
        modules
            .iter()
            .map(|m| {
                let file = format!("{}.py", m.replace('.', "/"));
                if base.is_empty() {
                    file
                } else {
                    format!("{base}/{file}")
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    };
    pytest_runs_unittest(
        &format!("python -m pytest -o python_files=test*.py {paths}"),
        &runner,
    )
}

/// Whether a module's source runs unittest itself (`unittest.main()`, a `TextTestRunner`).
fn runs_unittest(text: &str) -> bool {
    ["unittest.main(", "TextTestRunner(", "unittest.TestProgram("]
        .iter()
        .any(|m| text.contains(m))
        || (text.contains("from unittest import") && text.contains("main("))
}

/// `python tests/test.py -v`, `coverage run tests.py`: a script that runs unittest itself
/// (`unittest.main()`, a `TextTestRunner` over the suite it builds) gives no per-test report,
/// so pytest runs the test cases it holds (when it defines `TestCase`s and runs them only as
/// `__main__`: importing it must not start the runner) and those of the test modules it
/// imports, from the script's own directory as `python` would (decorator, jsonpatch).
fn unittest_script(cmd: &TestCommand, files: &BTreeMap<String, String>) -> Option<Delegation> {
    let script = cmd.python_script()?;
    let text = files.get(script)?;
    if !runs_unittest(text) {
        return None;
    }
    let dir = script.rsplit_once('/').map_or("", |(d, _)| d);
    let in_dir = |file: String| {
        if dir.is_empty() {
            file
        } else {
            format!("{dir}/{file}")
        }
    };
    let mut paths: Vec<String> = Vec::new();
    let guarded = text.contains("__name__") && text.contains("__main__");
    if guarded && text.contains("TestCase") {
        paths.push(script.to_string());
    }
    for m in main_imports(text, "") {
        let file = in_dir(format!("{}.py", m.replace('.', "/")));
        if !paths.contains(&file) {
            paths.push(file);
        }
    }
    if paths.is_empty() {
        return None;
    }
    // Its own file name joins the pattern (`tests/test.py` matches, jsonpatch's `tests.py`
    // does not): the verifier collects by the pattern too, and must see the same cases.
    let mut pattern = vec!["test*.py".to_string()];
    for p in &paths {
        let name = p.rsplit('/').next().unwrap_or(p);
        let matched = name.starts_with("test") && name.ends_with(".py");
        if !matched && !pattern.iter().any(|x| x == name) {
            pattern.push(name.to_string());
        }
    }
    let q = crate::testcmd::words::quote_if_needed;
    let quoted: Vec<String> = paths.iter().map(|p| q(p)).collect();
    pytest_runs_unittest(
        &format!(
            "python -m pytest -o {} {}",
            q(&format!("python_files={}", pattern.join(" "))),
            quoted.join(" ")
        ),
        script,
    )
}

/// `python -m dnslib.__init__`, `python pkg/mod.py`: a module whose `__main__` block runs its
/// own doctests (`doctest.testmod(...)`) and prints no per-test report. pytest collects the
/// same doctests (`--doctest-modules` on that file), with the option flags `testmod` was given
/// (`optionflags=doctest.ELLIPSIS`) and the interpreter's flags kept.
fn doctest_main(cmd: &TestCommand, files: &BTreeMap<String, String>) -> Option<Delegation> {
    let file = match (cmd.python_script(), cmd.python_module()) {
        (Some(s), _) => s.to_string(),
        (None, Some(m)) => format!("{}.py", m.replace('.', "/")),
        _ => return None,
    };
    let text = files.get(&file)?;
    let main = text
        .find("__name__ ==")
        .or_else(|| text.find("__name__=="))?;
    let body = &text[main..];
    if !body.contains("__main__") || !body.contains("testmod(") {
        return None;
    }
    let flags: Vec<String> = regex::Regex::new(r"doctest\.([A-Z_]+)")
        .expect("a valid pattern")
        .captures_iter(body)
        .map(|c| c[1].to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let q = crate::testcmd::words::quote_if_needed;
    let interpreter: Vec<&str> = cmd.argv[..cmd.args_at]
        .iter()
        .map(|w| w.raw.as_str())
        .collect();
    let mut line = format!("{} -m pytest --doctest-modules", interpreter.join(" "));
    if !flags.is_empty() {
        line.push_str(&format!(
            " -o {}",
            q(&format!("doctest_optionflags={}", flags.join(" ")))
        ));
    }
    line.push_str(&format!(" {}", q(&file)));
    pytest_in_place(
        &line,
        format!("`{file}` runs its own doctests: pytest collects them"),
    )
}

/// `python tests/manage.py test -v2 --keepdb testapp`, `python -m django test --settings=s`:
/// Django's own test runner prints no per-test report, and pytest alone cannot run its test
/// cases (no settings, no test database). pytest-django runs them with the settings the runner
/// would use: the module `--settings` names, else the `DJANGO_SETTINGS_MODULE` the command sets
/// or `manage.py` defaults to. A label is a dotted name importable from the script's directory
/// (which `python` puts first on `sys.path`, so it goes on `PYTHONPATH` too); as a path from
/// there it becomes pytest's argument, the checkout deciding later whether it is a package or
/// a module ([`TestCommand::with_module_paths`]). pytest-django is a test dependency.
fn django_test(cmd: &TestCommand, files: &BTreeMap<String, String>) -> Option<Delegation> {
    let (script_dir, defaults, args) = match (cmd.python_script(), cmd.python_module()) {
        (Some(s), _) if s == "manage.py" || s.ends_with("/manage.py") => {
            let text = files.get(s)?;
            if !text.contains("execute_from_command_line") {
                return None;
            }
            let dir = s.rsplit_once('/').map_or("", |(d, _)| d);
            (dir, Some(text.as_str()), &cmd.argv[cmd.args_at + 1..])
        }
        (None, Some("django")) => ("", None, &cmd.argv[cmd.args_at + 2..]),
        _ => return None,
    };
    if args.first().map(Word::text) != Some("test") {
        return None;
    }
    // Django's `test` options that take a value; every other option is a flag (`--keepdb`,
    // `-v2`, `--parallel` whose count, when given, is joined to it or a number).
    const VALUED: &[&str] = &[
        "-v",
        "--verbosity",
        "-p",
        "--pattern",
        "-t",
        "--top-level-directory",
        "-k",
        "--tag",
        "--exclude-tag",
        "--testrunner",
        "--pythonpath",
    ];
    let mut settings = None;
    let mut pattern = "test*.py".to_string();
    let mut labels = Vec::new();
    let mut it = args[1..].iter().peekable();
    while let Some(w) = it.next() {
        let t = w.text();
        if let Some(v) = t.strip_prefix("--settings=") {
            settings = Some(v.to_string());
        } else if t == "--settings" {
            settings = it.next().and_then(|v| v.value.clone());
        } else if let Some(v) = t.strip_prefix("--pattern=") {
            pattern = v.to_string();
        } else if t == "-p" || t == "--pattern" {
            pattern = it.next().and_then(|v| v.value.clone())?;
        } else if VALUED.contains(&t) {
            it.next();
        } else if t == "--parallel" {
            it.next_if(|v| v.text().chars().all(|c| c.is_ascii_digit()) || v.text() == "auto");
        } else if !t.starts_with('-') {
            labels.push(w.value.clone()?);
        }
    }
    let settings = settings
        .or_else(|| {
            cmd.env
                .iter()
                .find(|(k, _)| k == "DJANGO_SETTINGS_MODULE")
                .and_then(|(_, v)| v.value.clone())
        })
        .or_else(|| {
            let re =
                regex::Regex::new(r#"DJANGO_SETTINGS_MODULE['"]\s*,\s*['"]([A-Za-z_][\w.]*)['"]"#)
                    .expect("a valid pattern");
            Some(re.captures(defaults?)?[1].to_string())
        })?;
    let in_dir = |p: &str| {
        if script_dir.is_empty() {
            p.to_string()
        } else {
            format!("{script_dir}/{p}")
        }
    };
    let paths: Vec<String> = if labels.is_empty() {
        vec![in_dir(".")]
    } else {
        labels
            .iter()
            .map(|l| {
                if l.contains('/') {
                    in_dir(l.trim_end_matches('/'))
                } else {
                    in_dir(&l.replace('.', "/"))
                }
            })
            .collect()
    };
    let q = crate::testcmd::words::quote_if_needed;
    let interpreter: Vec<&str> = cmd.argv[..cmd.args_at]
        .iter()
        .map(|w| w.raw.as_str())
        .collect();
    // The script's directory leads `sys.path` under Django's runner: `PYTHONPATH` puts it
    // there (relative to where the command runs, as the script's path is), before what the
    // command already had. Not pytest's `-o pythonpath=`: older pytest asserts an ini file.
    let mut pythonpath = vec![
        if script_dir.is_empty() {
            "."
        } else {
            script_dir
        }
        .to_string(),
    ];
    if let Some((_, v)) = cmd.env.iter().find(|(k, _)| k == "PYTHONPATH") {
        pythonpath.push(v.value.clone()?);
    }
    let line = format!(
        "PYTHONPATH={} {} -m pytest --ds={} -o {} {}",
        q(&pythonpath.join(":")),
        interpreter.join(" "),
        q(&settings),
        q(&format!("python_files={pattern}")),
        paths.iter().map(|p| q(p)).collect::<Vec<_>>().join(" ")
    );
    let mut d = pytest_in_place(
        &line,
        format!(
            "`{}` is Django's test runner: pytest-django runs its test cases with settings `{settings}`",
            cmd.python_script().unwrap_or("python -m django")
        ),
    )?;
    let dir = match (cmd.cwd.as_deref(), script_dir) {
        (Some(c), "") => c.to_string(),
        (Some(c), s) => format!("{c}/{s}"),
        (None, "") => ".".to_string(),
        (None, s) => s.to_string(),
    };
    d.pythonpath = vec![dir];
    d.before = vec!["python -m pip install pytest-django".to_string()];
    Some(d)
}

/// The delegation of a unittest runner (`runner`, a path) to the pytest command `cmd`.
fn pytest_runs_unittest(cmd: &str, runner: &str) -> Option<Delegation> {
    pytest_in_place(
        cmd,
        format!("{runner} runs unittest: pytest runs its test cases"),
    )
}

/// A delegation to the pytest command `cmd`, which runs what the runner would, said by `note`.
fn pytest_in_place(cmd: &str, note: String) -> Option<Delegation> {
    let mut runs = TestCommand::parse(cmd).ok()?;
    runs.via = None;
    Some(Delegation {
        runs,
        install: None,
        pythonpath: Vec::new(),
        before: Vec::new(),
        note,
    })
}

/// The package's own modules a unittest runner imports (`from .test_trees import TestTrees`,
/// `from tests.test_x import *`, `from pkg.tests import (a_test, b_test)`), in order: what it
/// runs. An import inside a `try` is optional (lark's Nearley tests raise `ImportError`
/// without a git submodule), and not run.
fn main_imports(main: &str, package: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut try_at: Option<usize> = None;
    let mut lines = main.lines();
    while let Some(line) = lines.next() {
        let t = line.trim_start();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let indent = line.len() - t.len();
        let clause = ["except", "else:", "finally:"]
            .iter()
            .any(|c| t.starts_with(c));
        if try_at.is_some_and(|at| indent < at || (indent == at && !clause)) {
            try_at = None;
        }
        if t.starts_with("try:") {
            try_at = Some(indent);
            continue;
        }
        let Some(rest) = t.strip_prefix("from ") else {
            continue;
        };
        // A parenthesised name list goes on to its closing parenthesis.
        let mut stmt = rest.to_string();
        if stmt.contains('(') && !stmt.contains(')') {
            for more in lines.by_ref() {
                stmt.push(' ');
                stmt.push_str(more.split('#').next().unwrap_or(""));
                if more.contains(')') {
                    break;
                }
            }
        }
        if try_at.is_some() {
            continue;
        }
        let Some((from, names)) = stmt.split_once(" import ") else {
            continue;
        };
        let from = from.trim();
        let mut add = |m: &str| {
            if !m.is_empty() && !out.iter().any(|o| o == m) {
                out.push(m.to_string());
            }
        };
        // `from . import a_test` / `from pkg.tests import a_test`: the names are modules.
        if from == "." || (!package.is_empty() && from == package) {
            for n in names
                .split(|c: char| c == ',' || c == '(' || c == ')' || c.is_whitespace())
                .filter(|n| !n.is_empty() && *n != "as")
            {
                if n.chars().all(|c| c.is_alphanumeric() || c == '_') && n != "*" {
                    add(n);
                }
            }
            continue;
        }
        let m = if package.is_empty() {
            // A top-level runner (`runtests.py`) imports the stdlib too: only a test module.
            Some(from).filter(|m| !m.starts_with('.') && m.contains("test"))
        } else {
            from.strip_prefix('.')
                .or_else(|| from.strip_prefix(&format!("{package}.")))
                .filter(|m| !m.is_empty() && !m.starts_with('.'))
        };
        if let Some(m) = m {
            add(m);
        }
    }
    out
}

/// The install mode of `pip install`-like arguments (None: only dependencies).
pub fn install_of_args(args: &[String]) -> Option<Install> {
    let local = |a: &str| a == "." || a.starts_with(".[");
    if args
        .iter()
        .any(|a| a == "-e" || a == "--editable" || a.starts_with("-e."))
        && args.iter().any(|a| local(a) || a.starts_with("-e."))
    {
        Some(Install::Editable)
    } else if args.iter().any(|a| local(a)) {
        Some(Install::Built)
    } else {
        None
    }
}

/// The body of the session function `name` in a noxfile (`tests-3.11` names `tests`), else
/// the whole file.
fn nox_session<'a>(src: &'a str, name: Option<&str>) -> &'a str {
    let Some(name) = name else { return src };
    let bodies: Vec<&str> = src.split("\ndef ").skip(1).collect();
    let find = |n: &str| {
        bodies
            .iter()
            .find(|b| b.starts_with(&format!("{n}(")))
            .copied()
    };
    let base = name.split('-').next().unwrap_or(name);
    find(name)
        .or_else(|| find(&name.replace('-', "_")))
        .or_else(|| find(base))
        .map(|b| b.split("\n@").next().unwrap_or(b))
        .unwrap_or(src)
}

fn nox(cmd: &TestCommand, files: &BTreeMap<String, String>, is_test: IsTest) -> Option<Delegation> {
    let src = files.get("noxfile.py")?;
    let session = flag_value(cmd.args(), &["-s", "--session", "--sessions", "-e"]).or_else(|| {
        // `--tags tests`: the first session decorated with that tag.
        let tag = flag_value(cmd.args(), &["-t", "--tags"])?;
        let at = src
            .find(&format!("\"{tag}\""))
            .or_else(|| src.find(&format!("'{tag}'")))?;
        let def = src[at..].find("\ndef ")? + at + 5;
        let name = src[def..].split('(').next()?.trim().to_string();
        (!name.is_empty()).then_some(name)
    });
    let body = nox_session(src, session.as_deref());
    let line = call_args(body, "session.run(")
        .into_iter()
        .map(|a| {
            a.iter()
                .map(|w| crate::testcmd::words::quote_if_needed(w))
                .collect::<Vec<_>>()
                .join(" ")
        })
        .find(|c| is_test(c))?;
    // What the session installs: `"."`/`"-e", "."` read off its literals; a package passed in
    // a variable (`session.install(pkg, …)`, the `--installpkg dist/*.whl` idiom of hynek's
    // projects) is the project built, as is a command that hands nox `--installpkg`.
    let variable_pkg = regex::Regex::new(r"session\.install\(\s*[A-Za-z_]\w*\s*[,)]")
        .expect("a valid pattern")
        .is_match(body);
    let installpkg = cmd.args().iter().any(|w| w.text() == "--installpkg");
    let install = call_args(body, "session.install(")
        .iter()
        .find_map(|a| install_of_args(a))
        .or((variable_pkg || installpkg).then_some(Install::Built))
        .unwrap_or(Install::Checkout);
    Some(Delegation {
        runs: TestCommand::parse(&line).ok()?,
        install: Some(install),
        pythonpath: Vec::new(),
        before: Vec::new(),
        note: match session {
            Some(s) => format!("noxfile.py session `{s}`"),
            None => "noxfile.py".into(),
        },
    })
}

/// `NAME = value` / `?=` / `:=` assignments of a Makefile (one line each).
fn make_vars(mk: &str) -> BTreeMap<String, String> {
    let mut vars = BTreeMap::new();
    for l in mk.lines().filter(|l| !l.starts_with('\t')) {
        for op in [":=", "?=", "::=", "="] {
            if let Some((k, v)) = l.split_once(op) {
                let k = k.trim();
                if !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                    vars.entry(k.to_string())
                        .or_insert_with(|| v.trim().to_string());
                }
                break;
            }
        }
    }
    vars
}

/// `$(VAR)` / `${VAR}` replaced by the Makefile's value (`PYTHON` → python when unset; other
/// unknown variables dropped).
fn make_expand(line: &str, vars: &BTreeMap<String, String>, depth: u8) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(at) = rest.find('$') {
        out.push_str(&rest[..at]);
        let after = &rest[at + 1..];
        let close = match after.chars().next() {
            Some('(') => ')',
            Some('{') => '}',
            Some('$') => {
                out.push('$');
                rest = &after[1..];
                continue;
            }
            _ => {
                out.push('$');
                rest = after;
                continue;
            }
        };
        let Some(end) = after.find(close) else {
            out.push_str(&rest[at..]);
            return out;
        };
        let name = &after[1..end];
        match vars.get(name) {
            Some(v) if depth > 0 => out.push_str(&make_expand(v, vars, depth - 1)),
            _ if name.starts_with("PYTHON") => out.push_str("python"),
            _ => {}
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A tox line for the env's factors: `py38: pytest …` (or `!py38,docs: …`) is the line
/// after its condition when the condition holds, nothing when it does not; a line without
/// one is itself.
fn for_factors<'a>(l: &'a str, factors: &[&str]) -> Option<&'a str> {
    match l.split_once(": ") {
        Some((cond, rest)) if !cond.contains([' ', '=']) && !cond.starts_with('-') => cond
            .split(',')
            .any(|alt| {
                alt.split('-').all(|f| match f.strip_prefix('!') {
                    Some(neg) => !factors.contains(&neg),
                    None => factors.contains(&f),
                })
            })
            .then_some(rest),
        _ => Some(l),
    }
}

/// A task runner's arguments, as the shell passes them (words with expansions left out).
fn arg_values(cmd: &TestCommand) -> Vec<&str> {
    cmd.args()
        .iter()
        .filter_map(|w| w.value.as_deref())
        .collect()
}

/// The file a task runner reads: the one its `-f` named, else the first of `names` the checkout
/// has (the tool's own order). With its text.
fn task_file<'a>(
    files: &'a BTreeMap<String, String>,
    named: Option<&'a str>,
    names: &[&'a str],
) -> Option<(&'a str, &'a String)> {
    match named.map(|f| f.trim_start_matches("./")) {
        Some(f) => Some((f, files.get(f)?)),
        None => names.iter().find_map(|n| Some((*n, files.get(*n)?))),
    }
}

fn make(
    cmd: &TestCommand,
    files: &BTreeMap<String, String>,
    is_test: IsTest,
) -> Option<Delegation> {
    let args = arg_values(cmd);
    // `-f FILE` names the file; the target is the first word that is neither an option, an
    // option's value nor an assignment.
    let (mut named, mut asked) = (None, None);
    let mut i = 0;
    while let Some(&a) = args.get(i) {
        if let Some(f) = a
            .strip_prefix("--file=")
            .or_else(|| a.strip_prefix("--makefile="))
        {
            named = Some(f);
        } else if matches!(a, "-f" | "--file" | "--makefile") {
            named = args.get(i + 1).copied();
            i += 1;
        } else if matches!(a, "-C" | "--directory" | "-I" | "-o" | "-W") {
            i += 1;
        } else if asked.is_none() && !a.starts_with('-') && !a.contains('=') {
            asked = Some(a);
        }
        i += 1;
    }
    // Else GNU make's own order of names.
    let (file, mk) = task_file(files, named, &["GNUmakefile", "makefile", "Makefile"])?;
    // Else make's default goal.
    let target = match asked {
        Some(t) => t.to_string(),
        None => default_goal(mk).unwrap_or_else(|| "test".into()),
    };
    let vars = make_vars(mk);
    let (line, dir) = make_target_line(mk, &target, &vars, is_test, 4)?;
    let mut runs = TestCommand::parse(&line).ok()?;
    if let Some(d) = dir {
        runs.cwd = Some(d);
    }
    Some(Delegation {
        runs,
        install: None,
        pythonpath: Vec::new(),
        before: Vec::new(),
        note: format!("{file} target `{target}`"),
    })
}

/// What a bare `make` builds: `.DEFAULT_GOAL`, else the first rule's first target that is not
/// special (`.PHONY`) or a pattern (`%.o`).
fn default_goal(mk: &str) -> Option<String> {
    let mut first = None;
    for l in mk.lines() {
        if l.starts_with('\t') || l.trim_start().starts_with('#') {
            continue;
        }
        if let Some((k, v)) = l.split_once('=') {
            let k = k.trim_end_matches([':', '?', '+', ' ']).trim();
            if k == ".DEFAULT_GOAL" {
                return Some(v.trim().to_string()).filter(|v| !v.is_empty());
            }
            if !k.contains(':') {
                continue; // an assignment
            }
        }
        if first.is_none()
            && let Some((t, _)) = l.split_once(':')
            && let Some(t) = t.split_whitespace().next()
            && !t.starts_with('.')
            && !t.contains('%')
            && !t.contains('$')
        {
            first = Some(t.to_string());
        }
    }
    first
}

/// A Makefile target's test line (`cd DIR && cmd` in a recipe gives the directory), else its
/// prerequisites' in order (`ci: lint test`), `depth` levels down.
fn make_target_line(
    mk: &str,
    target: &str,
    vars: &BTreeMap<String, String>,
    is_test: IsTest,
    depth: u8,
) -> Option<(String, Option<String>)> {
    let mut in_target = false;
    let mut prereqs: Vec<String> = Vec::new();
    for l in mk.lines() {
        if !l.starts_with('\t') {
            in_target = false;
            if let Some((t, rest)) = l.split_once(':')
                && !rest.starts_with('=')
                && t.split_whitespace().any(|t| t == target)
            {
                in_target = true;
                prereqs.extend(
                    make_expand(rest.split(';').next().unwrap_or(""), vars, 3)
                        .split_whitespace()
                        .filter(|p| !p.contains('/') && !p.contains('.'))
                        .map(str::to_string),
                );
            }
            continue;
        }
        if !in_target {
            continue;
        }
        let r = l.trim().trim_start_matches(['@', '-', '+']);
        let r = make_expand(r, vars, 3);
        // `cd test && python test.py`: the directory, then the command.
        let (dir, r) = match r.strip_prefix("cd ").and_then(|x| x.split_once("&&")) {
            Some((d, rest)) => (Some(d.trim().to_string()), rest.trim().to_string()),
            None => (None, r),
        };
        if is_test(&r) {
            return Some((r, dir.filter(|d| !d.contains('$') && !d.starts_with('/'))));
        }
    }
    if depth == 0 {
        return None;
    }
    prereqs
        .iter()
        .filter(|p| p.as_str() != target)
        .find_map(|p| make_target_line(mk, p, vars, is_test, depth - 1))
}

/// One recipe of a justfile: its parameters (with defaults), the recipes it depends on (with
/// their argument expressions) and its body lines, unindented.
#[derive(Debug, Default)]
struct Recipe {
    name: String,
    params: Vec<(String, Option<String>)>,
    deps: Vec<(String, Vec<String>)>,
    body: Vec<String>,
}

/// A justfile's `NAME := "value"` assignments (string literals unquoted, other expressions as
/// written) and its recipes, in order.
fn just_file(text: &str) -> (BTreeMap<String, String>, Vec<Recipe>) {
    let assign = regex::Regex::new(r"^(?:export\s+)?([A-Za-z_][\w-]*)\s*:=\s*(.*?)\s*$")
        .expect("static regex");
    let header = regex::Regex::new(r"^@?([A-Za-z_][\w-]*)((?:\s+[^:]*?)?)\s*:(?:\s+(.*))?$")
        .expect("static regex");
    let dep = regex::Regex::new(r"\(([^)]*)\)|([A-Za-z_][\w-]*)").expect("static regex");
    let (mut vars, mut recipes) = (BTreeMap::new(), Vec::<Recipe>::new());
    let mut current: Option<Recipe> = None;
    for line in text.lines() {
        let starts_indented = line.starts_with([' ', '\t']);
        if starts_indented || line.trim().is_empty() {
            if let Some(r) = current.as_mut()
                && !line.trim().is_empty()
            {
                r.body.push(line.trim().to_string());
            }
            continue;
        }
        recipes.extend(current.take());
        let l = line.trim_end();
        if l.starts_with(['#', '[']) || l.starts_with("set ") || l.starts_with("alias ") {
            continue;
        }
        if let Some(c) = assign.captures(l) {
            vars.insert(c[1].to_string(), unquote_just(&c[2]));
            continue;
        }
        let Some(c) = header.captures(l) else {
            continue;
        };
        let params = shlex::split(c.get(2).map_or("", |m| m.as_str()))
            .unwrap_or_default()
            .into_iter()
            .map(|p| {
                let p = p.trim_start_matches(['*', '+', '$']).to_string();
                match p.split_once('=') {
                    Some((n, d)) => (n.to_string(), Some(d.to_string())),
                    None => (p, None),
                }
            })
            .collect();
        let deps = c
            .get(3)
            .map_or("", |m| m.as_str())
            .split("&&")
            .next()
            .map(|pre| {
                dep.captures_iter(pre)
                    .filter_map(|d| match (d.get(1), d.get(2)) {
                        (Some(call), _) => {
                            let mut w = shlex::split(call.as_str()).unwrap_or_default();
                            (!w.is_empty()).then(|| {
                                let name = w.remove(0);
                                (name, w)
                            })
                        }
                        (_, Some(name)) => Some((name.as_str().to_string(), Vec::new())),
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        current = Some(Recipe {
            name: c[1].to_string(),
            params,
            deps,
            body: Vec::new(),
        });
    }
    recipes.extend(current);
    (vars, recipes)
}

/// A justfile expression's value when it is a string literal; else the expression as written.
fn unquote_just(expr: &str) -> String {
    let e = expr.trim();
    for q in ['"', '\''] {
        if e.len() >= 2 && e.starts_with(q) && e.ends_with(q) {
            return e[1..e.len() - 1].to_string();
        }
    }
    e.to_string()
}

/// `{{ name }}` replaced by its value in `scope`; other expressions are left as written.
fn just_interpolate(line: &str, scope: &BTreeMap<String, String>) -> String {
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(r"\{\{\s*([A-Za-z_][\w-]*)\s*\}\}").expect("static regex")
    });
    RE.replace_all(line, |c: &regex::Captures| {
        scope
            .get(&c[1])
            .cloned()
            .unwrap_or_else(|| c[0].to_string())
    })
    .into_owned()
}

/// A venv's own tool in a recipe's line (`"${VENV_PATH}/bin/pytest"`, `.venv/bin/python`):
/// the sandbox's image is that environment, so the tool by its name.
fn venv_tool(line: &str) -> String {
    // Run for every line of a recipe: compiled once.
    static RE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
        regex::Regex::new(
            r#"^((?:[A-Za-z_]\w*=\S*\s+)*)["']?[^\s"'=]*/bin/(pytest|py\.test|python3?(?:\.\d+)?|coverage|tox|nox)["']?(\s|$)"#,
        )
        .expect("static regex")
    });
    RE.replace(line, "$1$2$3").into_owned()
}

/// `just [OPTIONS] [NAME=VALUE…] [RECIPE [ARGS…]]`: the recipe's test line from the justfile
/// (`justfile`, `Justfile`, `.justfile`, or `-f FILE`), its parameters bound to the arguments
/// (else their defaults) and `{{ … }}` filled from them and the file's assignments; else the
/// first test line of the recipes it depends on. The install lines of those recipes
/// (`(install venv)`: `pip install .[all]`) are what runs before it.
fn just(
    cmd: &TestCommand,
    files: &BTreeMap<String, String>,
    is_test: IsTest,
) -> Option<Delegation> {
    let args = arg_values(cmd);
    let (mut named, mut recipe, mut rest, mut overrides) = (None, None, Vec::new(), Vec::new());
    let mut i = 0;
    while let Some(&a) = args.get(i) {
        if recipe.is_some() {
            rest.push(a.to_string());
        } else if matches!(a, "-f" | "--justfile") {
            named = args.get(i + 1).copied();
            i += 1;
        } else if matches!(a, "-d" | "--working-directory" | "--set" | "--shell") {
            i += if a == "--set" { 2 } else { 1 };
        } else if let Some(f) = a.strip_prefix("--justfile=") {
            named = Some(f);
        } else if a.starts_with('-') {
        } else if let Some((k, v)) = a.split_once('=') {
            overrides.push((k.to_string(), v.to_string()));
        } else {
            recipe = Some(a.to_string());
        }
        i += 1;
    }
    let (file, text) = task_file(files, named, &["justfile", "Justfile", ".justfile"])?;
    let (mut vars, recipes) = just_file(text);
    vars.extend(overrides);
    // Without a name, just runs the file's first recipe.
    let target = recipe.or_else(|| recipes.first().map(|r| r.name.clone()))?;
    let mut before = Vec::new();
    let line = just_recipe_line(&recipes, &vars, &target, &rest, is_test, &mut before, 4)?;
    let runs = TestCommand::parse(&line).ok()?;
    Some(Delegation {
        runs,
        install: None,
        pythonpath: Vec::new(),
        note: format!("{file} recipe `{target}`"),
        before,
    })
}

/// The test line of recipe `name` called with `args` (its dependencies first, as just runs
/// them), `depth` levels of dependencies down; the install lines met on the way go to
/// `before`.
fn just_recipe_line(
    recipes: &[Recipe],
    vars: &BTreeMap<String, String>,
    name: &str,
    args: &[String],
    is_test: IsTest,
    before: &mut Vec<String>,
    depth: u8,
) -> Option<String> {
    let r = recipes.iter().find(|r| r.name == name)?;
    let mut scope = vars.clone();
    for (k, (p, default)) in r.params.iter().enumerate() {
        let v = args
            .get(k)
            .cloned()
            .or_else(|| default.as_deref().map(unquote_just))
            .unwrap_or_default();
        scope.insert(p.clone(), v);
    }
    let mut found = None;
    if depth > 0 {
        for (dep, dep_args) in &r.deps {
            // An argument is a parameter's name or a string literal.
            let values: Vec<String> = dep_args
                .iter()
                .map(|a| scope.get(a).cloned().unwrap_or_else(|| unquote_just(a)))
                .collect();
            let l = just_recipe_line(recipes, vars, dep, &values, is_test, before, depth - 1);
            found = found.or(l);
        }
    }
    for l in &r.body {
        let l = l.trim_start_matches(['@', '-']).trim();
        if l.starts_with('#') {
            continue;
        }
        let l = venv_tool(&just_interpolate(l, &scope));
        // What the job's `pip install` lines are read for (`ci_deps::pip_deps`).
        if l.contains("pip install") || l.contains("pip3 install") {
            before.push(l);
        } else if is_test(&l) {
            return Some(l);
        }
    }
    found
}

/// `hatch run [ENV:]SCRIPT args` / `pdm run SCRIPT args`: the script's command from
/// pyproject.toml (`[tool.hatch.envs.ENV.scripts]`, `[tool.pdm.scripts]`), `{args}` replaced
/// by the arguments given; a script whose first command is another script is followed.
fn script(cmd: &TestCommand, tool: &str, files: &BTreeMap<String, String>) -> Option<Delegation> {
    let parse = |name: &str| -> Option<toml::Value> { toml::from_str(files.get(name)?).ok() };
    let (pyproject, hatch_toml) = (parse("pyproject.toml"), parse("hatch.toml"));
    let words = cmd.args();
    let name = words.first()?.value.clone()?;
    let rest: Vec<&str> = words[1..].iter().map(|w| w.raw.as_str()).collect();
    let (env, script) = match name.split_once(':') {
        Some((e, s)) if tool == "hatch run" => (e.to_string(), s.to_string()),
        _ => ("default".to_string(), name.clone()),
    };
    // hatch: the env's scripts in pyproject.toml or hatch.toml, then the default env's (every
    // env inherits them).
    let hatch_scripts = |env: &str| -> Option<toml::Value> {
        let from_py = pyproject
            .as_ref()
            .and_then(|d| {
                d.get("tool")?
                    .get("hatch")?
                    .get("envs")?
                    .get(env)?
                    .get("scripts")
            })
            .filter(|t| t.get(&script).is_some());
        let from_hatch = hatch_toml
            .as_ref()
            .and_then(|d| d.get("envs")?.get(env)?.get("scripts"))
            .filter(|t| t.get(&script).is_some());
        from_py.or(from_hatch).cloned()
    };
    let table = if tool == "hatch run" {
        hatch_scripts(&env).or_else(|| hatch_scripts("default"))?
    } else {
        pyproject
            .as_ref()?
            .get("tool")?
            .get("pdm")?
            .get("scripts")?
            .clone()
    };
    let table = &table;
    let first_command = |v: &toml::Value| -> Option<String> {
        match v {
            toml::Value::String(s) => Some(s.clone()),
            toml::Value::Array(a) => a.first()?.as_str().map(str::to_string),
            toml::Value::Table(t) => t
                .get("cmd")
                .or_else(|| t.get("shell"))
                .and_then(command_text),
            _ => None,
        }
    };
    let mut line = first_command(table.get(&script)?)?;
    for _ in 0..3 {
        // A script made of other scripts: follow the first.
        let head = line.split_whitespace().next().unwrap_or("").to_string();
        match table.get(&head).and_then(first_command) {
            Some(next) if head != script => {
                let tail = line[head.len()..].to_string();
                line = format!("{next}{tail}");
            }
            _ => break,
        }
    }
    let args = rest.join(" ");
    let line = if line.contains("{args") {
        let mut out = String::new();
        let mut r = line.as_str();
        while let Some(at) = r.find("{args") {
            out.push_str(&r[..at]);
            let end = r[at..].find('}').map(|e| at + e).unwrap_or(r.len() - 1);
            let inner = &r[at + 1..end];
            let default = inner.split_once(':').map(|(_, d)| d).unwrap_or("");
            out.push_str(if args.is_empty() { default } else { &args });
            r = &r[end + 1..];
        }
        out.push_str(r);
        out
    } else if args.is_empty() {
        line
    } else {
        format!("{line} {args}")
    };
    Some(Delegation {
        runs: TestCommand::parse(&line).ok()?,
        install: None,
        pythonpath: Vec::new(),
        before: Vec::new(),
        note: if tool == "hatch run" {
            format!("pyproject.toml [tool.hatch.envs.{env}.scripts] {script}")
        } else {
            format!("pyproject.toml [tool.pdm.scripts] {script}")
        },
    })
}

/// `python [flags] setup.py test`: setuptools' `test` command (gone since setuptools 72) or a
/// project's own that runs unittest. pytest runs unittest's cases: under the top-level name of
/// setup()'s `test_suite` when it gives one (`tests.test_all` → `tests`), else where pytest
/// looks by itself (the checkout's files other than its configuration are not read here);
/// the interpreter's flags (`-Wall`) are kept.
fn setup_py_test(cmd: &TestCommand, files: &BTreeMap<String, String>) -> Option<Delegation> {
    if cmd.python_script()? != "setup.py"
        || cmd.argv.get(cmd.args_at + 1)?.value.as_deref()? != "test"
    {
        return None;
    }
    // Its top-level package or module (`tests.test_all` → `tests`): pytest collects what is
    // under it.
    let suite = files.get("setup.py").and_then(|t| {
        let m = regex::Regex::new(r#"test_suite\s*=\s*['"]([A-Za-z0-9_]+)[A-Za-z0-9_.]*['"]"#)
            .expect("a valid pattern")
            .captures(t)?;
        Some(m[1].to_string())
    });
    let flags: Vec<&str> = cmd.argv[..cmd.args_at]
        .iter()
        .map(|w| w.raw.as_str())
        .collect();
    let line = format!(
        "{} -m pytest -o 'python_files=test*.py' {}",
        flags.join(" "),
        suite.clone().unwrap_or_default()
    );
    Some(Delegation {
        runs: TestCommand::parse(line.trim()).ok()?,
        install: None,
        pythonpath: Vec::new(),
        before: Vec::new(),
        note: match suite {
            Some(s) => format!("pytest runs `setup.py test`'s suite `{s}`"),
            None => "pytest runs `setup.py test`'s unittest cases".to_string(),
        },
    })
}

/// A task's command text: a string, or an array of words (pixi's `cmd = ["pytest", "-x"]`).
fn command_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Array(a) => Some(
            a.iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        ),
        _ => None,
    }
}

/// One line of a task's command: whitespace (a multi-line TOML string) folded, the task's
/// arguments appended.
fn task_line(line: &str, args: &[&str]) -> String {
    line.split_whitespace()
        .chain(args.iter().copied())
        .collect::<Vec<_>>()
        .join(" ")
}

/// `poe TASK args` (poethepoet): the task from pyproject.toml's `[tool.poe.tasks]` (or
/// poe_tasks.toml's `[tasks]`). A string is a command; a table's `cmd` (or a `shell` script's
/// test line) is one, with the task's `env` — and that of a `ref` naming it, which a
/// `{default = …}` does not override — put in for `$NAME`/`${NAME}` as poe does; a `ref`, or
/// a `sequence` of tasks, is followed to the first that runs tests.
fn poe(cmd: &TestCommand, files: &BTreeMap<String, String>, is_test: IsTest) -> Option<Delegation> {
    let (from, doc) = match files.get("pyproject.toml").and_then(|t| {
        let d: toml::Value = toml::from_str(t).ok()?;
        d.get("tool")?.get("poe")?.get("tasks")?;
        Some(d)
    }) {
        Some(d) => (
            "pyproject.toml [tool.poe.tasks]",
            d["tool"]["poe"]["tasks"].clone(),
        ),
        None => {
            let d: toml::Value = toml::from_str(files.get("poe_tasks.toml")?).ok()?;
            ("poe_tasks.toml [tasks]", d.get("tasks")?.clone())
        }
    };
    let tasks = doc.as_table()?;
    let words = cmd.args();
    let name = words.first()?.value.clone()?;
    let rest: Vec<&str> = words[1..].iter().map(|w| w.raw.as_str()).collect();
    let mut env = BTreeMap::new();
    let line = poe_ref(tasks, &name, &mut env, is_test, 0)?;
    let vars = regex::Regex::new(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")
        .expect("a valid pattern");
    let line = vars.replace_all(&line, |c: &regex::Captures| {
        let n = c.get(1).or_else(|| c.get(2)).map_or("", |m| m.as_str());
        env.get(n).cloned().unwrap_or_else(|| c[0].to_string())
    });
    // poe exports the task's env to what it runs (`PYTHONPATH`, `CI`).
    let line = with_assignments(env.iter().map(|(k, v)| (k.as_str(), v.as_str())), &line);
    Some(Delegation {
        runs: TestCommand::parse(&task_line(&line, &rest)).ok()?,
        install: None,
        pythonpath: Vec::new(),
        before: Vec::new(),
        note: format!("{from} {name}"),
    })
}

/// `name = value` assignments in front of a command line, each value's whitespace folded and
/// quoted for the shell.
fn with_assignments<'a>(env: impl Iterator<Item = (&'a str, &'a str)>, line: &str) -> String {
    let assigned: Vec<String> = env
        .map(|(k, v)| format!("{k}={}", quote_if_needed(&task_line(v, &[]))))
        .collect();
    task_line(&format!("{} {line}", assigned.join(" ")), &[])
}

/// A reference to a poe task, with the arguments it may carry (`ref = "test -x"`).
fn poe_ref(
    tasks: &toml::Table,
    r: &str,
    env: &mut BTreeMap<String, String>,
    is_test: IsTest,
    depth: usize,
) -> Option<String> {
    let mut parts = r.split_whitespace();
    let target = tasks.get(parts.next()?)?;
    let line = poe_task(tasks, target, env, is_test, depth + 1)?;
    Some(task_line(&line, &parts.collect::<Vec<_>>()))
}

/// One poe task to its command line, `env` filled on the way.
fn poe_task(
    tasks: &toml::Table,
    task: &toml::Value,
    env: &mut BTreeMap<String, String>,
    is_test: IsTest,
    depth: usize,
) -> Option<String> {
    if depth > 8 {
        return None;
    }
    match task {
        toml::Value::String(s) => Some(s.clone()),
        // A sequence: its plain items are references.
        toml::Value::Array(items) => items.iter().find_map(|item| {
            let mut e = env.clone();
            let line = match item {
                toml::Value::String(r) => poe_ref(tasks, r, &mut e, is_test, depth),
                other => poe_task(tasks, other, &mut e, is_test, depth + 1),
            }?;
            is_test(&line).then(|| {
                *env = e;
                line
            })
        }),
        toml::Value::Table(t) => {
            for (k, v) in t
                .get("env")
                .and_then(|e| e.as_table())
                .into_iter()
                .flatten()
            {
                match v {
                    toml::Value::String(x) => {
                        env.insert(k.clone(), x.clone());
                    }
                    toml::Value::Table(d) => {
                        if let Some(x) = d.get("default").and_then(|x| x.as_str()) {
                            env.entry(k.clone()).or_insert_with(|| x.to_string());
                        }
                    }
                    _ => {}
                }
            }
            if let Some(c) = t.get("cmd").and_then(command_text) {
                Some(c)
            } else if let Some(sh) = t.get("shell").and_then(|x| x.as_str()) {
                sh.lines()
                    .map(str::trim)
                    .find(|l| is_test(l))
                    .map(str::to_string)
            } else if let Some(r) = t.get("ref").and_then(|x| x.as_str()) {
                poe_ref(tasks, r, env, is_test, depth)
            } else {
                t.get("sequence")
                    .and_then(|q| poe_task(tasks, q, env, is_test, depth + 1))
            }
        }
        _ => None,
    }
}

/// `pixi run [-e ENV] TASK args`: the task from pixi.toml (or pyproject.toml's `[tool.pixi]`),
/// looked up in the features the environment is made of, then the default `tasks`. A string
/// or a table's `cmd` is the command; a task with only `depends-on` is followed to the first
/// of those that runs tests.
fn pixi(
    cmd: &TestCommand,
    files: &BTreeMap<String, String>,
    is_test: IsTest,
) -> Option<Delegation> {
    let (from, root): (&str, toml::Value) = match files.get("pixi.toml") {
        Some(t) => ("pixi.toml", toml::from_str(t).ok()?),
        None => {
            let d: toml::Value = toml::from_str(files.get("pyproject.toml")?).ok()?;
            (
                "pyproject.toml [tool.pixi]",
                d.get("tool")?.get("pixi")?.clone(),
            )
        }
    };
    let env = flag_value(
        &cmd.argv[..cmd.args_at.min(cmd.argv.len())],
        &["-e", "--environment"],
    );
    let features: Vec<String> = env
        .as_deref()
        .and_then(|e| root.get("environments")?.get(e))
        .and_then(|v| match v {
            toml::Value::Array(a) => Some(a.clone()),
            toml::Value::Table(t) => t.get("features")?.as_array().cloned(),
            _ => None,
        })
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f.as_str().map(str::to_string))
        .collect();
    let mut tables: Vec<(String, &toml::Table)> = features
        .iter()
        .filter_map(|f| {
            let t = root.get("feature")?.get(f)?.get("tasks")?.as_table()?;
            Some((format!("[feature.{f}.tasks]"), t))
        })
        .collect();
    if let Some(t) = root.get("tasks").and_then(|t| t.as_table()) {
        tables.push(("[tasks]".into(), t));
    }
    let words = cmd.args();
    let name = words.first()?.value.clone()?;
    let rest: Vec<&str> = words[1..].iter().map(|w| w.raw.as_str()).collect();
    fn line_of(
        tables: &[(String, &toml::Table)],
        name: &str,
        is_test: IsTest,
        depth: usize,
    ) -> Option<(String, String)> {
        if depth > 8 {
            return None;
        }
        let (at, task) = tables
            .iter()
            .find_map(|(at, t)| t.get(name).map(|v| (at.clone(), v)))?;
        if let Some(c) = command_text(task).or_else(|| task.get("cmd").and_then(command_text)) {
            // The task's `env` is exported to its command.
            let env = task
                .get("env")
                .and_then(|e| e.as_table())
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.as_str(), v.as_str()?)));
            return Some((at, with_assignments(env, &c)));
        }
        let deps = task
            .get("depends-on")
            .or_else(|| task.get("depends_on"))?
            .as_array()?;
        deps.iter().find_map(|d| {
            let n = d
                .as_str()
                .or_else(|| d.get("task").and_then(|t| t.as_str()))?;
            line_of(tables, n, is_test, depth + 1).filter(|(_, l)| is_test(l))
        })
    }
    let (at, line) = line_of(&tables, &name, is_test, 0)?;
    Some(Delegation {
        runs: TestCommand::parse(&task_line(&line, &rest)).ok()?,
        install: None,
        pythonpath: Vec::new(),
        before: Vec::new(),
        note: format!("{from} {at} {name}"),
    })
}

#[cfg(test)]
#[path = "ci_resolve_tests.rs"]
mod tests;
