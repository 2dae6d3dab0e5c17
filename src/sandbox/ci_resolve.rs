//! What a delegating test command runs, read from the repository's files (pure): a tox env's
//! `commands` (with its `setenv` and `changedir`), a nox session's `session.run`, a Makefile
//! target's recipe, a hatch or pdm script. The result is filled into the typed command
//! ([`TestCommand::runs`]), so every consumer renders what finally runs — in the sandbox, where
//! tox and nox could not build their environments (no network), the image already holds them.

use std::collections::BTreeMap;

use super::ci_text::{call_args, ini};
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
        return (cmd, d);
    }
    let d = match &cmd.launcher {
        Launcher::Tox => tox(&cmd, files, python, is_test),
        Launcher::Nox => nox(&cmd, files, is_test),
        Launcher::Make => make(&cmd, files, is_test),
        Launcher::EnvRunner { tool } if tool == "hatch run" || tool == "pdm run" => {
            script(&cmd, tool, files)
        }
        Launcher::Script { path } => shell_script(path, files, is_test),
        _ => None,
    };
    match d {
        Some(d) => {
            cmd.runs = Some(Box::new(d.runs.clone()));
            cmd.via = Some(d.note.clone());
            (cmd, Some(d))
        }
        None => (cmd, None),
    }
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

/// tox substitutions in a `commands` line: `{posargs:default}` → default, `{posargs}` and
/// `{envsitepackagesdir}`-like paths dropped, `{toxinidir}` → the checkout, `{envpython}` →
/// python.
fn tox_line(line: &str) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let Some(end) = rest[start..].find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let inner = &rest[start + 1..start + end];
        match inner.split_once(':') {
            Some(("posargs", default)) => out.push_str(default),
            // `{env:NAME:default}`: the variable is not set here (tox's own, or the CI's).
            Some(("env", rest)) => out.push_str(rest.split_once(':').map_or("", |(_, d)| d)),
            _ => match inner {
                "posargs" => {}
                "envpython" => out.push_str("python"),
                "toxinidir" => out.push('.'),
                // Kept for the word pass below, which drops the words naming them.
                other => {
                    out.push('{');
                    out.push_str(other);
                    out.push('}');
                }
            },
        }
        rest = &rest[start + end + 1..];
    }
    out.push_str(rest);
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
    let test_line = commands.iter().map(|l| l.as_str()).find_map(|l| {
        // `py38: pytest …`: a line for some factors only.
        let l = match l.split_once(": ") {
            Some((cond, rest)) if !cond.contains(' ') && !cond.starts_with('-') => {
                let holds = cond.split(',').any(|alt| {
                    alt.split('-').all(|f| match f.strip_prefix('!') {
                        Some(neg) => !factors.contains(&neg),
                        None => factors.contains(&f),
                    })
                });
                if !holds {
                    return None;
                }
                rest
            }
            _ => l,
        };
        is_test(l).then(|| tox_line(l))
    })?;
    let mut runs = TestCommand::parse(&test_line).ok()?;
    let install = if truthy(merged.get("skip_install")) {
        Install::Checkout
    } else if truthy(merged.get("usedevelop")) {
        Install::Editable
    } else {
        Install::Built
    };
    let mut pythonpath = Vec::new();
    for l in merged.get("setenv").into_iter().flat_map(|s| s.lines()) {
        let Some((k, v)) = l.trim().split_once('=') else {
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
        let d = tox_line(dir);
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
    let mut at = &mut c;
    while at.runs.is_some() {
        at = at.runs.as_mut().expect("checked");
    }
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
    for raw in text.lines() {
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
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
                cwd = match cwd {
                    Some(c) => Some(format!("{c}/{d}")),
                    None => Some(d.to_string()),
                };
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
            return Some(Delegation {
                runs,
                install: None,
                pythonpath: Vec::new(),
                note: path.to_string(),
            });
        }
    }
    None
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
    let install = call_args(body, "session.install(")
        .iter()
        .find_map(|a| install_of_args(a))
        .unwrap_or(Install::Checkout);
    Some(Delegation {
        runs: TestCommand::parse(&line).ok()?,
        install: Some(install),
        pythonpath: Vec::new(),
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

fn make(
    cmd: &TestCommand,
    files: &BTreeMap<String, String>,
    is_test: IsTest,
) -> Option<Delegation> {
    let mk = files.get("Makefile")?;
    let target = cmd
        .args()
        .iter()
        .filter_map(|w| w.value.as_deref())
        .find(|a| !a.starts_with('-') && !a.contains('='))
        .unwrap_or("test")
        .to_string();
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
        note: format!("Makefile target `{target}`"),
    })
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
            toml::Value::Table(t) => {
                t.get("cmd")
                    .or_else(|| t.get("shell"))
                    .and_then(|c| match c {
                        toml::Value::String(s) => Some(s.clone()),
                        toml::Value::Array(a) => Some(
                            a.iter()
                                .filter_map(|x| x.as_str())
                                .collect::<Vec<_>>()
                                .join(" "),
                        ),
                        _ => None,
                    })
            }
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
        note: if tool == "hatch run" {
            format!("pyproject.toml [tool.hatch.envs.{env}.scripts] {script}")
        } else {
            format!("pyproject.toml [tool.pdm.scripts] {script}")
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn is_test(l: &str) -> bool {
        l.contains("pytest") || l.contains("unittest")
    }

    fn runs(cmd: &str, f: &BTreeMap<String, String>) -> Option<String> {
        let (c, d) = resolve(TestCommand::parse(cmd).unwrap(), f, Some("3.11"), &is_test);
        d.map(|_| {
            let mut at = &c;
            while let Some(r) = &at.runs {
                at = r;
            }
            at.written.clone()
        })
    }

    #[test]
    fn tox_envs_with_posargs_setenv_factors_and_changedir() {
        let tox = "[tox]\nenvlist = py{310,311}, lint\n\n[testenv]\ndeps = pytest\nsetenv =\n    PYTHONPATH = {toxinidir}/src\n    CI = 1\ncommands =\n    py310: pytest --old {posargs}\n    py311: pytest {posargs:tests -x}\n\n[testenv:lint]\ncommands = flake8\n\n[testenv:sub]\nchangedir = {toxinidir}/pkg\ncommands = {envpython} -m pytest {posargs}\n";
        let f = files(&[("tox.ini", tox)]);
        assert_eq!(
            runs("tox -e py311", &f).as_deref(),
            Some("PYTHONPATH=src CI=1 pytest tests -x")
        );
        assert_eq!(
            runs("tox -e py310", &f).as_deref(),
            Some("PYTHONPATH=src CI=1 pytest --old")
        );
        // No -e: the envlist's first CPython env.
        assert_eq!(
            runs("tox", &f).as_deref(),
            Some("PYTHONPATH=src CI=1 pytest --old")
        );
        let (c, _) = resolve(
            TestCommand::parse("tox -e sub").unwrap(),
            &f,
            None,
            &is_test,
        );
        assert_eq!(c.runs.as_ref().unwrap().cwd.as_deref(), Some("pkg"));
        assert!(c.runs_pytest());
        assert_eq!(
            runs(
                "tox -e lint",
                &files(&[("tox.ini", "[testenv:lint]\ncommands = flake8\n")])
            ),
            None
        );
    }

    #[test]
    fn tox_labels_factors_several_envs_and_toml_configs() {
        let tox = "[tox]\nenvlist = lint, py311-tests, py311-docs\nlabels =\n    ci = lint, py311-tests\n\n[testenv:lint]\ncommands = flake8\n\n[testenv:py311-tests]\ncommands = pytest -x tests\n\n[testenv:py311-docs]\ncommands = sphinx-build docs out\n";
        let f = files(&[("tox.ini", tox)]);
        // The label's first env that runs tests (lint runs none).
        assert_eq!(
            runs("tox run -m ci", &f).as_deref(),
            Some("pytest -x tests")
        );
        assert_eq!(
            runs("tox r -f py311-tests", &f).as_deref(),
            Some("pytest -x tests")
        );
        assert_eq!(
            runs("tox -e lint,py311-tests,coverage", &f).as_deref(),
            Some("pytest -x tests")
        );
        assert_eq!(
            runs("python -Im tox -e py311-tests", &f).as_deref(),
            Some("pytest -x tests")
        );
        assert_eq!(
            runs("uvx --with tox-uv tox -e py311-tests", &f).as_deref(),
            Some("pytest -x tests")
        );
        let toml = "env_list = [\"py311\"]\n[env_run_base]\ndeps = [\"pytest\"]\ncommands = [[\"pytest\", {replace = \"posargs\", default = [\"tests\"], extend = true}]]\n[env_run_base.set_env]\nPYTHONPATH = \"src\"\n";
        let f = files(&[("tox.toml", toml)]);
        assert_eq!(
            runs("tox -e py311", &f).as_deref(),
            Some("PYTHONPATH=src pytest tests")
        );
        let py = format!("[tool.tox]\n{toml}").replace("[env_run_base", "[tool.tox.env_run_base");
        let f = files(&[("pyproject.toml", &py)]);
        assert_eq!(
            runs("tox", &f).as_deref(),
            Some("PYTHONPATH=src pytest tests")
        );
    }

    #[test]
    fn tox_env_paths_and_continued_lines() {
        let tox = "[testenv]\ncommands =\n    pytest --basetemp={envtmpdir} \\\n      --cov termcolor {posargs:tests}\n    {envbindir}/coverage report\n";
        let f = files(&[("tox.ini", tox)]);
        assert_eq!(
            runs("tox -e py", &f).as_deref(),
            Some("pytest --cov termcolor tests")
        );
        let tox = "[testenv]\ncommands = pytest --basetemp {envtmpdir} -x\n";
        assert_eq!(
            runs("tox", &files(&[("tox.ini", tox)])).as_deref(),
            Some("pytest -x")
        );
    }

    #[test]
    fn tox_running_from_its_work_dir_against_the_installed_package_runs_from_the_checkout() {
        // glom 24.11's tox.ini: the suite runs in `.tox` against `{envsitepackagesdir}/glom`.
        let tox = "[testenv]\nchangedir = .tox\ndeps = -rrequirements.txt\ncommands = coverage run --parallel --rcfile {toxinidir}/.tox-coveragerc -m pytest -vv --doctest-modules {envsitepackagesdir}/glom {posargs}\n";
        let f = files(&[("tox.ini", tox)]);
        let (c, d) = resolve(
            TestCommand::parse("tox -e py311,coverage-report").unwrap(),
            &f,
            None,
            &is_test,
        );
        assert!(d.is_some() && c.runs_pytest(), "{c:?}");
        assert_eq!(c.cwd, None, "{c:?}");
        assert!(!c.describe().contains("envsitepackagesdir"), "{c:?}");
    }

    #[test]
    fn tox_env_substitutions_take_their_default() {
        // pluggy 1.6's tox.ini: the command is a variable with pytest as its default.
        let tox = "[testenv]\ncommands=\n  {env:_PLUGGY_TOX_CMD:pytest} {posargs}\n  coverage: coverage report -m\nextras=testing\n";
        let f = files(&[("tox.ini", tox)]);
        assert_eq!(runs("tox -e py310", &f).as_deref(), Some("pytest"));
        let tox = "[testenv]\ncommands = pytest {env:PYTEST_ADDOPTS} -x\n";
        assert_eq!(
            runs("tox", &files(&[("tox.ini", tox)])).as_deref(),
            Some("pytest -x")
        );
    }

    #[test]
    fn a_delegation_not_found_stands_in_for_python_m_pytest() {
        let f = files(&[("Makefile", "lint:\n\truff .\n")]);
        let (c, d) = resolve(
            TestCommand::parse("CI=1 make test").unwrap(),
            &f,
            None,
            &is_test,
        );
        assert!(d.is_none() && c.unresolved());
        let (s, note) = stand_in(&c).unwrap();
        assert!(s.runs_pytest() && !s.unresolved(), "{s:?}");
        assert!(
            note.contains("`CI=1 make test`") || note.contains("`make test`"),
            "{note}"
        );
        assert_eq!(s.written, "CI=1 make test");
        // A command that runs pytest needs no stand-in.
        assert!(stand_in(&TestCommand::parse("pytest").unwrap()).is_none());
    }

    #[test]
    fn scripts_and_inherited_hatch_scripts() {
        let sh = "#!/bin/bash\nset -ex\npip install .\nexport TERMINAL_WIDTH=3000\nmkdir empty\ncd empty\ncoverage run -m pytest -W error --pyargs pkg || exit 1\ncurl -Os https://uploader.codecov.io/latest/linux/codecov\n";
        let f = files(&[("ci.sh", sh), ("scripts/test.sh", sh)]);
        assert_eq!(
            runs("./ci.sh", &f).as_deref(),
            Some("TERMINAL_WIDTH=3000 coverage run -m pytest -W error --pyargs pkg")
        );
        let (c, _) = resolve(
            TestCommand::parse("uv run bash scripts/test.sh").unwrap(),
            &f,
            None,
            &is_test,
        );
        assert!(c.runs_pytest(), "{c:?}");
        let mut at = &c;
        while let Some(r) = &at.runs {
            at = r;
        }
        assert_eq!(at.cwd.as_deref(), Some("empty"));
        let py = "[tool.hatch.envs.default.scripts]\ntest = \"pytest {args:tests}\"\n[tool.hatch.envs.cov]\ndependencies = [\"coverage\"]\n";
        let f = files(&[("pyproject.toml", py)]);
        assert_eq!(
            runs("hatch run cov:test", &f).as_deref(),
            Some("pytest tests")
        );
        let hatch = "[envs.default.scripts]\ncheck = \"pytest -q\"\n";
        let f = files(&[
            ("pyproject.toml", "[project]\nname = \"x\"\n"),
            ("hatch.toml", hatch),
        ]);
        assert_eq!(
            runs("hatch run +py=3.11 check", &f).as_deref(),
            Some("pytest -q")
        );
    }

    #[test]
    fn nox_sessions_make_targets_and_scripts() {
        let nox = "import nox\n\n@nox.session\ndef lint(session):\n    session.run(\"flake8\")\n\n@nox.session(python=[\"3.11\"])\ndef tests(session):\n    session.install(\"-e\", \".\")\n    session.run(\"pytest\", \"-q\", \"tests dir\")\n";
        let f = files(&[("noxfile.py", nox)]);
        assert_eq!(
            runs("nox -s tests-3.11", &f).as_deref(),
            Some("pytest -q 'tests dir'")
        );
        let mk = "PYTHON ?= python3\nPYTEST_ARGS = -x -q\n\ntest: install\n\t@$(PYTHON) -m pytest $(PYTEST_ARGS) $(UNSET) tests\n\nlint:\n\tflake8\n";
        let f = files(&[("Makefile", mk)]);
        assert_eq!(
            runs("make test", &f).as_deref(),
            Some("python3 -m pytest -x -q tests")
        );
        assert_eq!(
            runs("make", &f).as_deref(),
            Some("python3 -m pytest -x -q tests")
        );
        let py = "[tool.hatch.envs.default.scripts]\ntest = \"pytest {args:tests}\"\ncov = [\"test --cov\", \"coverage report\"]\n\n[tool.hatch.envs.types.scripts]\ncheck = \"mypy src\"\n\n[tool.pdm.scripts]\ntest = {cmd = [\"pytest\", \"-x\"]}\n";
        let f = files(&[("pyproject.toml", py)]);
        assert_eq!(runs("hatch run test", &f).as_deref(), Some("pytest tests"));
        assert_eq!(
            runs("hatch run test -k a", &f).as_deref(),
            Some("pytest -k a")
        );
        assert_eq!(
            runs("hatch run default:cov", &f).as_deref(),
            Some("pytest tests --cov")
        );
        assert_eq!(runs("pdm run test", &f).as_deref(), Some("pytest -x"));
        assert_eq!(runs("hatch run nope", &f), None);
    }
}
