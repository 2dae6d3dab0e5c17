//! What the repository's CI installs for its tests (pure): the evidence prepare's dependencies
//! layer follows before it falls back to the project's own metadata.
//!
//! Read here, in this order (the first that names anything wins):
//! 1. the tox environment or nox session the workflow's test step runs: tox `deps` (factor
//!    conditions and `{[section]key}` references resolved, `-r`/`-c` files, `.[extra]`) and
//!    `extras`; nox `session.install(...)` of the session that runs the tests;
//! 2. the `pip install` lines of that job before the test line (tox, nox, pip, build tools and
//!    coverage uploaders left out; `-e .[test]` counts as the extra `test`).
//!
//! Levels 3 to 5 (test extras and dependency groups, `requirements-test*.txt`, a top-level
//! `requirements.txt`/`requirements-dev.txt` when nothing narrower exists) need the project's
//! metadata parsed as TOML/Python: `images/sandbox/deps.py` applies them when this finds nothing.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::ci_text as ci;

/// What to install for the tests, and the evidence it came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DepsSource {
    /// Human-readable evidence, e.g. "tox.ini [testenv:py] deps (CI runs `tox -e py`)".
    pub source: String,
    /// PEP 508 requirement strings.
    #[serde(default)]
    pub requirements: Vec<String>,
    /// `-r` files, relative to the checkout.
    #[serde(default)]
    pub files: Vec<String>,
    /// `-c` files, relative to the checkout.
    #[serde(default)]
    pub constraints: Vec<String>,
    /// Extras of the project itself (`.[test]`, tox `extras = test`), and dependency groups
    /// (`--group tests`): deps.py takes a name as an extra, else as a group.
    #[serde(default)]
    pub extras: Vec<String>,
    /// Lock files whose pinned versions CI installs (`uv.lock`: `uv run` and `uv sync` follow
    /// it), checkout-relative: deps.py constrains to them when the checkout has them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub locks: Vec<String>,
}

impl DepsSource {
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
            && self.files.is_empty()
            && self.constraints.is_empty()
            && self.extras.is_empty()
    }

    /// Adds an extra or dependency group unless one of that (normalised) name is there.
    fn add_extra(&mut self, name: &str) {
        if !name.is_empty() && !self.extras.iter().any(|e| normalize(e) == normalize(name)) {
            self.extras.push(name.to_string());
        }
    }

    /// Adds what `other` names that this does not yet.
    pub fn merge(&mut self, other: DepsSource) {
        for (mine, theirs) in [
            (&mut self.requirements, other.requirements),
            (&mut self.files, other.files),
            (&mut self.constraints, other.constraints),
            (&mut self.extras, other.extras),
            (&mut self.locks, other.locks),
        ] {
            for x in theirs {
                if !mine.contains(&x) {
                    mine.push(x);
                }
            }
        }
    }

    /// Adds one install argument list (already split into words, options included).
    fn add_args(&mut self, words: &[String]) {
        let mut i = 0;
        while i < words.len() {
            let w = words[i].as_str();
            let next = words.get(i + 1).map(String::as_str);
            let (opt, inline) = match w.split_once('=') {
                Some((o, v)) if o.starts_with("--") => (o, Some(v)),
                _ => (w, None),
            };
            match opt {
                "-r" | "--requirement" => {
                    if let Some(v) = inline.or(next) {
                        push_path(&mut self.files, v);
                        i += usize::from(inline.is_none());
                    }
                }
                "-c" | "--constraint" => {
                    if let Some(v) = inline.or(next) {
                        push_path(&mut self.constraints, v);
                        i += usize::from(inline.is_none());
                    }
                }
                "-e" | "--editable" => {
                    if let Some(v) = inline.or(next) {
                        self.add_item(v);
                        i += usize::from(inline.is_none());
                    }
                }
                // A dependency group (pip 25.1, uv, nox: `session.install("--group", "tests")`;
                // `pyproject.toml:tests` names the file too). deps.py reads a name in `extras`
                // as the project's extra, else its dependency group.
                "--group" => {
                    if let Some(v) = inline.or(next) {
                        self.add_extra(v.rsplit(':').next().unwrap_or(v).trim());
                        i += usize::from(inline.is_none());
                    }
                }
                _ if w.starts_with("-r") && w.len() > 2 => push_path(&mut self.files, &w[2..]),
                _ if w.starts_with("-c") && w.len() > 2 => {
                    push_path(&mut self.constraints, &w[2..])
                }
                _ if w.starts_with("-e") && w.len() > 2 => self.add_item(&w[2..]),
                _ if w.starts_with('-') => {
                    if OPTS_WITH_VALUE.contains(&opt) && inline.is_none() {
                        i += 1;
                    }
                }
                _ => self.add_item(w),
            }
            i += 1;
        }
    }

    /// One positional install argument: the project itself (its extras), a local path or a
    /// built artefact (skipped), or a requirement.
    fn add_item(&mut self, item: &str) {
        let item = item.trim().trim_start_matches("{toxinidir}/");
        if item.is_empty() || item.contains("${{") || item.contains('{') {
            return;
        }
        if let Some(extras) = project_extras(item) {
            for e in extras {
                if !self.extras.contains(&e) {
                    self.extras.push(e);
                }
            }
            return;
        }
        let local = item.starts_with(['.', '/'])
            || item.starts_with("file:")
            || item.ends_with(".whl")
            || item.ends_with(".tar.gz")
            || item.ends_with(".zip");
        if local || is_tool(item) {
            return;
        }
        if !self.requirements.iter().any(|r| r == item) {
            self.requirements.push(item.to_string());
        }
    }
}

/// Options of `pip install` that take a value (skipped with it).
const OPTS_WITH_VALUE: &[&str] = &[
    "-i",
    "--index-url",
    "--extra-index-url",
    "-f",
    "--find-links",
    "--progress-bar",
    "--prefix",
    "-t",
    "--target",
    "--root",
    "--timeout",
    "--retries",
    "--cache-dir",
    "--python-version",
    "--platform",
    "--only-binary",
    "--no-binary",
    "--upgrade-strategy",
    "--python",
    "-p",
    "--trusted-host",
];

/// Tools that install, drive or report on the tests rather than being needed by them.
const TOOLS: &[&str] = &[
    "pip",
    "setuptools",
    "wheel",
    "tox",
    "tox-gh-actions",
    "tox-gh",
    "tox-uv",
    "nox",
    "virtualenv",
    "build",
    "twine",
    "uv",
    "poetry",
    "pipenv",
    "pdm",
    "hatch",
    "flit",
    "codecov",
    "coveralls",
    "coveralls-python",
    "python-coveralls",
    "pre-commit",
];

fn normalize(name: &str) -> String {
    let mut out = String::new();
    let mut sep = false;
    for c in name.chars() {
        if matches!(c, '-' | '_' | '.') {
            sep = true;
            continue;
        }
        if sep && !out.is_empty() {
            out.push('-');
        }
        sep = false;
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The distribution name of a requirement string (`Foo[bar]>=1; python_version<"3.9"` → `foo`).
pub fn requirement_name(req: &str) -> String {
    let end = req
        .find(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.')))
        .unwrap_or(req.len());
    normalize(&req[..end])
}

fn is_tool(item: &str) -> bool {
    let name = requirement_name(item);
    TOOLS.contains(&name.as_str())
}

/// `.` / `.[test,docs]` / `-e.[test]` → the extras named (empty for a plain `.`).
fn project_extras(item: &str) -> Option<Vec<String>> {
    let rest = item.strip_prefix('.')?;
    let rest = rest.strip_prefix('/').unwrap_or(rest);
    if rest.is_empty() {
        return Some(Vec::new());
    }
    let inner = rest.strip_prefix('[')?.split(']').next()?;
    Some(
        inner
            .split(',')
            .map(|e| e.trim().to_string())
            .filter(|e| !e.is_empty())
            .collect(),
    )
}

fn push_path(v: &mut Vec<String>, p: &str) {
    let p = p
        .trim()
        .trim_start_matches("{toxinidir}/")
        .trim_start_matches("./");
    if p.is_empty() || p.contains('{') || p.contains("${{") || p.starts_with('/') {
        return;
    }
    if !v.iter().any(|x| x == p) {
        v.push(p.to_string());
    }
}

/// The tox configuration: `tox.ini`, else pyproject's `legacy_tox_ini`, else setup.cfg's
/// `[tox:tox]` (whose `[testenv*]` sections read as in tox.ini). Returns (file, text).
pub fn tox_config(files: &BTreeMap<String, String>) -> Option<(String, String)> {
    if let Some(t) = files.get("tox.ini") {
        return Some(("tox.ini".into(), t.clone()));
    }
    if let Some(t) = files.get("tox.toml")
        && let Some(text) = toml_as_ini(t, false)
    {
        return Some(("tox.toml".into(), text));
    }
    if let Some(p) = files.get("pyproject.toml")
        && let Some(text) = legacy_tox_ini(p)
    {
        return Some(("pyproject.toml legacy_tox_ini".into(), text));
    }
    if let Some(p) = files.get("pyproject.toml")
        && let Some(text) = toml_as_ini(p, true)
    {
        return Some(("pyproject.toml [tool.tox]".into(), text));
    }
    if let Some(c) = files.get("setup.cfg")
        && c.contains("[tox:tox]")
    {
        return Some(("setup.cfg".into(), c.clone()));
    }
    None
}

/// tox's TOML configuration (tox.toml, or pyproject's native `[tool.tox]` when `in_pyproject`)
/// as the INI text the readers here take: `env_run_base` → `[testenv]`, `env.NAME` →
/// `[testenv:NAME]`, `commands` one line per command (`{replace = "posargs", default = […]}`
/// → `{posargs:…}`), `set_env` → `setenv`, `change_dir` → `changedir`, `deps`, `extras`,
/// `labels`, `env_list` → `envlist`.
fn toml_as_ini(text: &str, in_pyproject: bool) -> Option<String> {
    let doc: toml::Value = toml::from_str(text).ok()?;
    let root = if in_pyproject {
        doc.get("tool")?.get("tox")?
    } else {
        &doc
    };
    let word = |v: &toml::Value| -> Option<String> {
        let replace = v.get("replace").and_then(|r| r.as_str());
        match (v, replace) {
            (toml::Value::String(s), _) => Some(crate::testcmd::words::quote_if_needed(s)),
            (toml::Value::Table(t), Some("posargs")) => {
                let default: Vec<String> = t
                    .get("default")
                    .and_then(|d| d.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|x| x.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default();
                Some(if default.is_empty() {
                    "{posargs}".into()
                } else {
                    format!("{{posargs:{}}}", default.join(" "))
                })
            }
            (toml::Value::Table(t), Some("env")) => t
                .get("name")
                .and_then(|n| n.as_str())
                .map(|n| format!("${n}")),
            _ => None,
        }
    };
    let section = |t: &toml::Value| -> String {
        let mut out = String::new();
        if let Some(cmds) = t.get("commands").and_then(|c| c.as_array()) {
            out.push_str("commands =\n");
            for c in cmds {
                if let Some(ws) = c.as_array() {
                    let line: Vec<String> = ws.iter().filter_map(word).collect();
                    out.push_str(&format!("    {}\n", line.join(" ")));
                }
            }
        }
        for key in ["deps", "extras", "labels"] {
            if let Some(list) = t.get(key).and_then(|d| d.as_array()) {
                out.push_str(&format!("{key} =\n"));
                for d in list.iter().filter_map(|x| x.as_str()) {
                    out.push_str(&format!("    {d}\n"));
                }
            }
        }
        if let Some(env) = t.get("set_env").and_then(|e| e.as_table()) {
            out.push_str("setenv =\n");
            for (k, v) in env {
                if let Some(v) = v.as_str() {
                    out.push_str(&format!("    {k} = {v}\n"));
                }
            }
        }
        if let Some(d) = t.get("change_dir").and_then(|d| d.as_str()) {
            out.push_str(&format!("changedir = {d}\n"));
        }
        for (key, ini_key) in [
            ("skip_install", "skip_install"),
            ("use_develop", "usedevelop"),
        ] {
            if let Some(b) = t.get(key).and_then(|b| b.as_bool()) {
                out.push_str(&format!("{ini_key} = {b}\n"));
            }
        }
        out
    };
    let mut ini = String::from("[tox]\n");
    if let Some(list) = root.get("env_list").and_then(|l| l.as_array()) {
        let envs: Vec<&str> = list.iter().filter_map(|x| x.as_str()).collect();
        ini.push_str(&format!("envlist = {}\n", envs.join(", ")));
    }
    if let Some(base) = root.get("env_run_base") {
        ini.push_str(&format!("\n[testenv]\n{}", section(base)));
    }
    if let Some(envs) = root.get("env").and_then(|e| e.as_table()) {
        for (name, t) in envs {
            ini.push_str(&format!("\n[testenv:{name}]\n{}", section(t)));
        }
    }
    (root.get("env_run_base").is_some() || root.get("env").is_some()).then_some(ini)
}

/// The string of `legacy_tox_ini = """..."""` (or `'''`) in pyproject.toml.
fn legacy_tox_ini(pyproject: &str) -> Option<String> {
    let at = pyproject.find("legacy_tox_ini")?;
    let rest = &pyproject[at..];
    let rest = &rest[rest.find('=')? + 1..];
    let rest = rest.trim_start();
    for q in ["\"\"\"", "'''"] {
        if let Some(body) = rest.strip_prefix(q) {
            let end = body.find(q)?;
            return Some(body[..end].to_string());
        }
    }
    None
}

/// Whether a factor condition (`py38,py39`, `!py27`, `py3-django42`) holds for an env's
/// factors.
fn factors_match(cond: &str, factors: &[String]) -> bool {
    cond.split(',').any(|alt| {
        alt.split('-').all(|f| {
            let f = f.trim();
            match f.strip_prefix('!') {
                Some(neg) => !factors.iter().any(|x| x == neg),
                None => factors.iter().any(|x| x == f),
            }
        })
    })
}

/// A tox value with `{[section]key}` references replaced (one level deep is what configs use;
/// two are followed) and `{posargs}`/`{toxinidir}` dropped.
pub(super) fn substitute(
    value: &str,
    ini: &BTreeMap<String, BTreeMap<String, String>>,
    depth: u8,
) -> String {
    let mut out = String::new();
    let mut rest = value;
    while let Some(start) = rest.find("{[") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(close) = after.find("]") else {
            out.push_str(&rest[start..]);
            return out;
        };
        let section = &after[..close];
        let tail = &after[close + 1..];
        let Some(end) = tail.find('}') else {
            out.push_str(&rest[start..]);
            return out;
        };
        let key = tail[..end].trim();
        let section = section.trim();
        let section = if section == "tox" && !ini.contains_key("tox") {
            "tox:tox"
        } else {
            section
        };
        if let Some(v) = ini.get(section).and_then(|s| s.get(key))
            && depth > 0
        {
            out.push_str(&substitute(v, ini, depth - 1));
        }
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out.replace("{posargs}", "").replace("{toxinidir}/", "")
}

/// The deps and extras of a tox environment (`None`: the environment names none).
pub fn tox_deps(ini: &BTreeMap<String, BTreeMap<String, String>>, env: Option<&str>) -> DepsSource {
    let mut merged = ini.get("testenv").cloned().unwrap_or_default();
    if let Some(e) = env
        && let Some(s) = ini.get(&format!("testenv:{e}"))
    {
        merged.extend(s.clone());
    }
    let factors: Vec<String> = env
        .map(|e| e.split('-').map(str::to_string).collect())
        .unwrap_or_default();
    let mut d = DepsSource::default();
    let conditional = |line: &str| -> Option<String> {
        // `py38,py39: mock`, `!py27: x` (a URL's `https://` is not a condition).
        if let Some((cond, value)) = line.split_once(':') {
            let cond = cond.trim();
            let value = value.trim();
            let is_cond = !cond.is_empty()
                && !value.starts_with('/')
                && cond
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '!' | ',' | '-' | '_'));
            if is_cond {
                return factors_match(cond, &factors).then(|| value.to_string());
            }
        }
        Some(line.to_string())
    };
    if let Some(deps) = merged.get("deps") {
        for line in substitute(deps, ini, 2).lines() {
            let line = line.split(" #").next().unwrap_or("").trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(l) = conditional(line) {
                d.add_args(&shlex::split(&l).unwrap_or_else(|| vec![l.clone()]));
            }
        }
    }
    let skip = merged
        .get("skip_install")
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("true"))
        || merged
            .get("package")
            .is_some_and(|v| v.trim().eq_ignore_ascii_case("skip"));
    if !skip && let Some(extras) = merged.get("extras") {
        for line in substitute(extras, ini, 2).lines() {
            if let Some(l) = conditional(line.trim()) {
                for e in l.split(',').map(str::trim).filter(|e| !e.is_empty()) {
                    if !d.extras.iter().any(|x| x == e) {
                        d.extras.push(e.to_string());
                    }
                }
            }
        }
    }
    d
}

/// The tox environment a command runs: `-e ENV` (first of a list), else `[gh-actions]`'s
/// mapping for the CI's Python, else the first `py*` env of `envlist`.
pub fn tox_env(
    line: &str,
    ini: &BTreeMap<String, BTreeMap<String, String>>,
    python: Option<&str>,
) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let flag = words
        .iter()
        .position(|w| *w == "-e" || *w == "--envlist")
        .and_then(|i| words.get(i + 1).copied())
        .or_else(|| words.iter().find_map(|w| w.strip_prefix("-e")));
    if let Some(e) = flag {
        // `tox -e "py310-extras"` as a shell line writes it: the env is what the shell passes.
        let e = e.trim_matches(['"', '\'']);
        let e = e.split(',').next().unwrap_or(e).trim();
        if !e.is_empty() && !e.contains('$') {
            return Some(e.to_string());
        }
    }
    if let (Some(v), Some(gh)) = (python, ini.get("gh-actions"))
        && let Some(map) = gh.get("python")
    {
        for l in map.lines() {
            if let Some((ver, envs)) = l.split_once(':')
                && ver.trim() == v
            {
                let first = envs.split([',', ' ']).find(|e| !e.trim().is_empty());
                if let Some(e) = first {
                    return Some(e.trim().to_string());
                }
            }
        }
    }
    let section = ini.get("tox").or_else(|| ini.get("tox:tox"))?;
    let envs = expand_envlist(section.get("envlist")?);
    // CPython before PyPy: `py312`, `py3`, `py`, then anything `py*`.
    envs.iter()
        .find(|e| e.starts_with("py") && !e.starts_with("pypy"))
        .or_else(|| envs.iter().find(|e| e.starts_with("py")))
        .cloned()
}

/// A tox `envlist` with its `{a,b}` factor groups expanded: `py{38,39}-x, lint` →
/// `py38-x, py39-x, lint`.
pub fn expand_envlist(list: &str) -> Vec<String> {
    // Split on commas and whitespace outside braces.
    let mut items = Vec::new();
    let (mut cur, mut depth) = (String::new(), 0usize);
    for c in list.chars() {
        match c {
            '{' => {
                depth += 1;
                cur.push(c);
            }
            '}' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            ',' | '\n' | ' ' | '\t' if depth == 0 => {
                if !cur.trim().is_empty() {
                    items.push(std::mem::take(&mut cur));
                }
                cur.clear();
            }
            _ => cur.push(c),
        }
    }
    if !cur.trim().is_empty() {
        items.push(cur);
    }
    let mut out = Vec::new();
    for item in items {
        let mut done = vec![String::new()];
        let mut rest = item.trim();
        while let Some(open) = rest.find('{') {
            let Some(close) = rest[open..].find('}').map(|i| open + i) else {
                break;
            };
            let (pre, alts) = (&rest[..open], &rest[open + 1..close]);
            done = done
                .iter()
                .flat_map(|d| {
                    alts.split(',')
                        .map(move |a| format!("{d}{pre}{}", a.trim()))
                })
                .collect();
            rest = &rest[close + 1..];
        }
        out.extend(done.into_iter().map(|d| format!("{d}{rest}")));
    }
    out
}

/// Whether a tox command runs an environment that does not run the tests (docs, linters, type
/// checkers, packaging): such a CI step is not the test step.
pub fn is_non_test_tox(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    let Some(env) = words
        .iter()
        .position(|w| *w == "-e" || *w == "--envlist")
        .and_then(|i| words.get(i + 1).copied())
        .or_else(|| words.iter().find_map(|w| w.strip_prefix("-e")))
    else {
        return false;
    };
    env.split(',').all(|e| {
        let e = e.trim().to_ascii_lowercase();
        [
            "docs",
            "doc",
            "lint",
            "linting",
            "typing",
            "mypy",
            "pre-commit",
            "style",
            "format",
            "flake8",
            "pylint",
            "ruff",
            "black",
            "isort",
            "build",
            "release",
            "check-manifest",
            "readme",
            "pyright",
            "spelling",
            "linkcheck",
        ]
        .iter()
        .any(|n| e == *n || e.starts_with(&format!("{n}-")))
    })
}

/// nox: the `session.install(...)` calls of the session function whose `session.run(...)`
/// is the test command `cmd` (the whole file when no function holds it).
pub fn nox_deps(noxfile: &str, cmd: &str) -> DepsSource {
    let runs_tests = |body: &str| {
        ci::call_args(body, "session.run(")
            .iter()
            .any(|a| a.join(" ") == cmd)
    };
    let body = noxfile
        .split("\ndef ")
        .skip(1)
        .find(|f| runs_tests(f))
        .unwrap_or(noxfile);
    let mut d = DepsSource::default();
    for args in ci::call_args(body, "session.install(") {
        d.add_args(&args);
    }
    d
}

/// What a hatch environment installs for its tests (`hatch test` runs `hatch-test`; `hatch run
/// ENV:…` runs ENV): its `dependencies` (for `hatch-test` hatch's own pytest and pytest-mock
/// when it names none), `extra-dependencies`, and its `features` as extras of the project;
/// from `hatch.toml` (`[envs.X]`) or pyproject.toml (`[tool.hatch.envs.X]`). `None` when no
/// such environment is configured.
pub fn hatch_deps(files: &BTreeMap<String, String>, env: &str) -> Option<DepsSource> {
    let parse = |name: &str| -> Option<toml::Value> { toml::from_str(files.get(name)?).ok() };
    let (from, table) = parse("hatch.toml")
        .and_then(|d| d.get("envs")?.get(env).cloned())
        .map(|t| ("hatch.toml", t))
        .or_else(|| {
            parse("pyproject.toml")
                .and_then(|d| d.get("tool")?.get("hatch")?.get("envs")?.get(env).cloned())
                .map(|t| ("pyproject.toml", t))
        })?;
    let strings = |key: &str| -> Vec<String> {
        table
            .get(key)
            .and_then(|v| v.as_array())
            .map(|a| {
                a.iter()
                    .filter_map(|v| v.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut d = DepsSource {
        source: format!("{from} hatch environment `{env}`"),
        ..Default::default()
    };
    d.requirements = strings("dependencies");
    if d.requirements.is_empty() && env == "hatch-test" {
        d.requirements = vec!["pytest".into(), "pytest-mock".into()];
    }
    d.requirements.extend(strings("extra-dependencies"));
    d.extras = strings("features");
    Some(d)
}

/// The keys of a TOML table (none when it is missing or not a table): the extras or groups
/// a pyproject declares.
fn table_keys(v: Option<&toml::Value>) -> Vec<String> {
    v.and_then(|v| v.as_table())
        .map(|t| t.keys().cloned().collect())
        .unwrap_or_default()
}

/// uv options that name what the environment holds and take a value.
const UV_VALUED: &[&str] = &[
    "--extra",
    "--no-extra",
    "--group",
    "--no-group",
    "--only-group",
    "--with",
    "--with-requirements",
    "--with-editable",
];

/// A tool's option words as (option, value) pairs: `--opt=value`, or `--opt value` for the
/// options in `valued`; a flag has an empty value; other words are skipped.
fn option_pairs(words: &[String], valued: &[&str]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let (opt, inline) = match words[i].split_once('=') {
            Some((o, v)) if o.starts_with("--") => (o, Some(v.to_string())),
            _ => (words[i].as_str(), None),
        };
        let value = match inline {
            Some(v) => v,
            None if valued.contains(&opt) => {
                i += 1;
                words.get(i).cloned().unwrap_or_default()
            }
            None => String::new(),
        };
        if opt.starts_with('-') {
            out.push((opt.to_string(), value));
        }
        i += 1;
    }
    out
}

/// What uv puts beside the project in the environment `uv run` and `uv sync` make: the
/// project's default dependency groups (`dev`, or `[tool.uv] default-groups`; uv's older
/// `[tool.uv] dev-dependencies` is the `dev` group, which deps.py reads), and what each
/// invocation's options add or take away (`--extra`, `--all-extras`, `--group`, `--all-groups`,
/// `--dev`, `--no-dev`, `--no-default-groups`, `--only-group`, `--only-dev`, `--no-group`,
/// `--no-extra`, `--with`, `--with-requirements`). `invocations`: the option words of each
/// `uv run`/`uv sync` the job runs (the environment is the union: `uv run` syncs inexactly,
/// keeping what an earlier `uv sync` installed). Extras and groups go to `extras` (deps.py
/// resolves a name as the project's extra, else its group).
pub fn uv_deps(invocations: &[Vec<String>], pyproject: Option<&str>) -> DepsSource {
    let doc: Option<toml::Value> = pyproject.and_then(|t| toml::from_str(t).ok());
    let all_extras = table_keys(
        doc.as_ref()
            .and_then(|d| d.get("project")?.get("optional-dependencies")),
    );
    let all_groups = table_keys(doc.as_ref().and_then(|d| d.get("dependency-groups")));
    let defaults: Vec<String> = match doc
        .as_ref()
        .and_then(|d| d.get("tool")?.get("uv")?.get("default-groups"))
    {
        Some(toml::Value::String(s)) if s == "all" => all_groups.clone(),
        Some(toml::Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect(),
        _ => vec!["dev".to_string()],
    };
    // A default group the project does not declare installs nothing (uv's older
    // `[tool.uv] dev-dependencies` is the `dev` group).
    let legacy_dev = doc
        .as_ref()
        .and_then(|d| d.get("tool")?.get("uv")?.get("dev-dependencies"))
        .is_some();
    let defaults: Vec<String> = defaults
        .into_iter()
        .filter(|g| {
            all_groups.iter().any(|a| normalize(a) == normalize(g)) || (g == "dev" && legacy_dev)
        })
        .collect();
    // `uv run` and `uv sync` install the versions the lock pins (`--frozen` or not, a
    // current lock is followed as it is).
    let mut d = DepsSource {
        locks: vec!["uv.lock".into()],
        ..Default::default()
    };
    for words in invocations {
        let (mut groups, mut extras): (Vec<String>, Vec<String>) = (defaults.clone(), Vec::new());
        let (mut no_groups, mut no_extras) = (Vec::new(), Vec::new());
        for (opt, value) in option_pairs(words, UV_VALUED) {
            match opt.as_str() {
                "--extra" => extras.push(value),
                "--all-extras" => extras.extend(all_extras.iter().cloned()),
                "--no-extra" => no_extras.push(value),
                "--group" => groups.push(value),
                "--all-groups" => groups.extend(all_groups.iter().cloned()),
                "--no-group" => no_groups.push(value),
                "--dev" => groups.push("dev".into()),
                "--no-dev" => no_groups.push("dev".into()),
                "--no-default-groups" => groups.retain(|g| !defaults.contains(g)),
                "--only-group" => {
                    groups.retain(|g| !defaults.contains(g));
                    groups.push(value);
                }
                "--only-dev" => groups = vec!["dev".into()],
                "--with" => {
                    for r in value.split(',').map(str::trim).filter(|r| !r.is_empty()) {
                        d.add_item(r);
                    }
                }
                "--with-requirements" => push_path(&mut d.files, &value),
                _ => {}
            }
        }
        let norm = |s: &String| normalize(s);
        let no_g: Vec<String> = no_groups.iter().map(norm).collect();
        let no_e: Vec<String> = no_extras.iter().map(norm).collect();
        for name in groups
            .iter()
            .filter(|g| !no_g.contains(&normalize(g)))
            .chain(extras.iter().filter(|e| !no_e.contains(&normalize(e))))
        {
            d.add_extra(name);
        }
    }
    d
}

/// What `poetry install` puts beside the project: every dependency group the pyproject does
/// not mark `optional` (the older `[tool.poetry.dev-dependencies]` is `dev`), and what each
/// invocation's options change (`--with`, `--without`, `--only`, `--no-dev`, `-E`/`--extras`,
/// `--all-extras`). `invocations`: the option words of each `poetry install` the job runs (an
/// empty list for a `poetry run` with no install line: the default install). Groups and
/// extras go to `extras` (deps.py reads poetry's groups and extras); `poetry.lock` pins them.
pub fn poetry_deps(invocations: &[Vec<String>], pyproject: Option<&str>) -> DepsSource {
    let doc: Option<toml::Value> = pyproject.and_then(|t| toml::from_str(t).ok());
    let poetry = doc.as_ref().and_then(|d| d.get("tool")?.get("poetry"));
    let groups: Vec<(String, bool)> = poetry
        .and_then(|p| p.get("group")?.as_table())
        .map(|t| {
            t.iter()
                .map(|(k, v)| {
                    let optional = v.get("optional").and_then(|o| o.as_bool()) == Some(true);
                    (k.clone(), optional)
                })
                .collect()
        })
        .unwrap_or_default();
    let legacy_dev = poetry.and_then(|p| p.get("dev-dependencies")).is_some();
    let all_extras = table_keys(poetry.and_then(|p| p.get("extras")));
    let mut d = DepsSource {
        locks: vec!["poetry.lock".into()],
        ..Default::default()
    };
    let list = |v: &str| -> Vec<String> {
        v.split([',', ' '])
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(str::to_string)
            .collect()
    };
    for words in invocations {
        let mut on: Vec<String> = groups
            .iter()
            .filter(|(_, optional)| !optional)
            .map(|(g, _)| g.clone())
            .collect();
        if legacy_dev && !on.iter().any(|g| g == "dev") {
            on.push("dev".into());
        }
        let mut extras = Vec::new();
        for (opt, value) in
            option_pairs(words, &["--with", "--without", "--only", "-E", "--extras"])
        {
            match opt.as_str() {
                "--with" => on.extend(list(&value)),
                "--without" => {
                    let off = list(&value);
                    on.retain(|g| !off.contains(g));
                }
                "--only" => on = list(&value),
                "--no-dev" => on.retain(|g| g != "dev"),
                "-E" | "--extras" => extras.extend(list(&value)),
                "--all-extras" => extras.extend(all_extras.iter().cloned()),
                _ => {}
            }
        }
        // `main` is the project's own dependencies: the project's install brings them.
        for name in on.iter().filter(|g| *g != "main").chain(&extras) {
            d.add_extra(name);
        }
    }
    d
}

/// The option words of every install of `tool` (`poetry install`, `pdm install`/`pdm sync`) in
/// job script lines; `TOOL run` alone counts as a default install (CI installed the project
/// some way that `run` then uses).
pub fn tool_installs(lines: &[String], tool: &str, verbs: &[&str]) -> Vec<Vec<String>> {
    let mut installs = Vec::new();
    let mut runs = false;
    for line in lines {
        for part in line.split("&&").flat_map(|p| p.split(';')) {
            let words = shlex::split(part.trim()).unwrap_or_default();
            if let Some(at) = words
                .windows(2)
                .position(|w| w[0] == tool && verbs.contains(&w[1].as_str()))
            {
                installs.push(words[at + 2..].to_vec());
            } else if words.windows(2).any(|w| w[0] == tool && w[1] == "run") {
                runs = true;
            }
        }
    }
    if installs.is_empty() && runs {
        installs.push(Vec::new());
    }
    installs
}

/// What `pdm install` (or `pdm sync`) puts beside the project: every dev-dependency group
/// (`[tool.pdm.dev-dependencies]`, and `[dependency-groups]`, which pdm installs alike) unless
/// `--prod`/`--production`; `-G`/`--group NAME` selects groups or extras instead (`:all`:
/// every one), `--without NAME` drops one. `invocations`: as [`tool_installs`] gives them.
/// Groups and extras go to `extras` (deps.py reads pdm's groups); `pdm.lock` pins them.
pub fn pdm_deps(invocations: &[Vec<String>], pyproject: Option<&str>) -> DepsSource {
    let doc: Option<toml::Value> = pyproject.and_then(|t| toml::from_str(t).ok());
    let mut dev = table_keys(
        doc.as_ref()
            .and_then(|d| d.get("tool")?.get("pdm")?.get("dev-dependencies")),
    );
    for g in table_keys(doc.as_ref().and_then(|d| d.get("dependency-groups"))) {
        if !dev.contains(&g) {
            dev.push(g);
        }
    }
    let extras = table_keys(
        doc.as_ref()
            .and_then(|d| d.get("project")?.get("optional-dependencies")),
    );
    let mut d = DepsSource {
        locks: vec!["pdm.lock".into()],
        ..Default::default()
    };
    for words in invocations {
        let mut selected: Option<Vec<String>> = None;
        let (mut prod, mut without) = (false, Vec::new());
        for (opt, value) in option_pairs(words, &["-G", "--group", "--without"]) {
            match opt.as_str() {
                "-G" | "--group" if value == ":all" => {
                    selected = Some(dev.iter().chain(&extras).cloned().collect());
                }
                "-G" | "--group" => selected.get_or_insert_with(Vec::new).extend(
                    value
                        .split(',')
                        .map(str::trim)
                        .filter(|v| !v.is_empty() && *v != "default")
                        .map(str::to_string),
                ),
                "--prod" | "--production" => prod = true,
                "--without" => without.extend(value.split(',').map(|v| v.trim().to_string())),
                _ => {}
            }
        }
        let on = match selected {
            Some(s) => s,
            None if prod => Vec::new(),
            None => dev.clone(),
        };
        for name in on.iter().filter(|g| !without.contains(g)) {
            d.add_extra(name);
        }
    }
    d
}

/// The option words of every `uv sync` and `uv run` in job script lines (`uv sync
/// --all-extras`, `uv run --extra test pytest`: the options up to the command `uv run` runs,
/// where the parsed test command puts it).
pub fn uv_invocations(lines: &[String]) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    for line in lines {
        for part in line.split("&&").flat_map(|p| p.split(';')) {
            let words = shlex::split(part.trim()).unwrap_or_default();
            if let Some(at) = words.windows(2).position(|w| w == ["uv", "sync"]) {
                out.push(words[at + 2..].to_vec());
                continue;
            }
            let Ok(cmd) = crate::testcmd::TestCommand::parse(part.trim()) else {
                continue;
            };
            let uv_run = cmd.levels().find(|c| {
                matches!(&c.launcher, crate::testcmd::Launcher::EnvRunner { tool } if tool == "uv run")
            });
            if let Some(c) = uv_run
                && let Some(run) = c.argv.iter().position(|w| w.text() == "run")
            {
                let options = c.argv.get(run + 1..c.args_at).unwrap_or_default();
                out.push(options.iter().map(|w| w.text().to_string()).collect());
            }
        }
    }
    out
}

/// The `pip install` parts of job script lines (before the test line).
pub fn pip_deps(lines: &[String]) -> DepsSource {
    let mut d = DepsSource::default();
    for line in lines {
        for part in line.split("&&").flat_map(|p| p.split(';')) {
            let words = shlex::split(part.trim()).unwrap_or_default();
            // `pip install`, `pip3 install`, `python -m pip install`, `uv pip install`.
            let at = words.iter().enumerate().position(|(i, w)| {
                w == "install"
                    && i > 0
                    && (matches!(words[i - 1].as_str(), "pip" | "pip3" | "pip3.exe")
                        || words[i - 1].ends_with("/pip"))
            });
            if let Some(at) = at {
                d.add_args(&words[at + 1..]);
            }
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ini(text: &str) -> BTreeMap<String, BTreeMap<String, String>> {
        ci::ini(text)
    }

    #[test]
    fn tox_deps_follow_factors_references_and_files() {
        let tox = "[tox]\nenvlist = py{38,39,310}, lint\n\n[base]\ndeps =\n    hypothesis\n\n[testenv]\ndeps =\n    pytest>=6\n    pytest-cov\n    {[base]deps}\n    py38: mock\n    !py38: rich\n    -r{toxinidir}/requirements/test.txt\n    -cconstraints.txt\n    .[speedups]\nextras = test\ncommands = pytest {posargs}\n\n[testenv:lint]\ndeps = ruff\ncommands = ruff check .\n";
        let d = tox_deps(&ini(tox), Some("py"));
        assert_eq!(
            d.requirements,
            vec!["pytest>=6", "pytest-cov", "hypothesis", "rich"]
        );
        assert_eq!(d.files, vec!["requirements/test.txt"]);
        assert_eq!(d.constraints, vec!["constraints.txt"]);
        assert_eq!(d.extras, vec!["speedups", "test"]);
        let d = tox_deps(&ini(tox), Some("py38"));
        assert!(d.requirements.contains(&"mock".to_string()));
        assert!(!d.requirements.contains(&"rich".to_string()));
        // The lint env overrides deps.
        let d = tox_deps(&ini(tox), Some("lint"));
        assert_eq!(d.requirements, vec!["ruff"]);
        // skip_install: the project's extras are not installed.
        let d = tox_deps(
            &ini("[testenv]\nskip_install = true\nextras = test\ndeps = pytest\n"),
            None,
        );
        assert!(d.extras.is_empty());
        assert_eq!(d.requirements, vec!["pytest"]);
    }

    #[test]
    fn tox_env_from_flag_gh_actions_or_envlist() {
        let t = ini(
            "[tox]\nenvlist = lint, py311, py312\n\n[gh-actions]\npython =\n    3.11: py311\n    3.12: py312, lint\n",
        );
        assert_eq!(tox_env("tox -e py", &t, None).as_deref(), Some("py"));
        // Quoted as a shell line writes it (Automat's `tox -e "py310-extras"`).
        assert_eq!(
            tox_env("tox -e \"py310-extras\"", &t, None).as_deref(),
            Some("py310-extras")
        );
        assert_eq!(
            tox_env("tox -e 'py310-extras,lint'", &t, None).as_deref(),
            Some("py310-extras")
        );
        assert_eq!(
            tox_env("tox -epy312,lint", &t, None).as_deref(),
            Some("py312")
        );
        assert_eq!(tox_env("tox", &t, Some("3.12")).as_deref(), Some("py312"));
        assert_eq!(tox_env("tox", &t, None).as_deref(), Some("py311"));
        // Factor groups expand; CPython comes before PyPy.
        let t2 = ini("[tox]\nenvlist =\n    pypy310, py{37,38,py3}-x, mypy-test\n");
        assert_eq!(tox_env("tox", &t2, None).as_deref(), Some("py37-x"));
        assert_eq!(
            expand_envlist("py{37,38}-{a,b}, lint"),
            vec!["py37-a", "py37-b", "py38-a", "py38-b", "lint"]
        );
        assert!(is_non_test_tox("tox -e docs"));
        assert!(is_non_test_tox("tox -e lint,typing"));
        assert!(!is_non_test_tox("tox -e py"));
        assert!(!is_non_test_tox("tox"));
        assert_eq!(
            tox_env("tox -e ${{ matrix.env }}", &t, None).as_deref(),
            Some("py311")
        );
    }

    #[test]
    fn tox_config_from_pyproject_and_setup_cfg() {
        let mut files = BTreeMap::new();
        files.insert(
            "pyproject.toml".to_string(),
            "[tool.tox]\nlegacy_tox_ini = \"\"\"\n[testenv]\ndeps = pytest\n\"\"\"\n".to_string(),
        );
        let (from, text) = tox_config(&files).unwrap();
        assert_eq!(from, "pyproject.toml legacy_tox_ini");
        assert_eq!(tox_deps(&ini(&text), None).requirements, vec!["pytest"]);
        files.insert("tox.ini".into(), "[testenv]\ndeps = nose\n".into());
        assert_eq!(tox_config(&files).unwrap().0, "tox.ini");
    }

    #[test]
    fn pip_lines_without_tools() {
        let lines: Vec<String> = [
            "python -m pip install --upgrade pip setuptools wheel",
            "pip install tox tox-gh-actions",
            "pip install -e .[test,docs] && pip install pytest-xdist==3.5 'hypothesis>=6'",
            "python -m pip install -r requirements/ci.txt -c constraints.txt --progress-bar off",
            "pip install codecov; pip install dist/*.whl",
            "uv pip install --system pytest-timeout",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let d = pip_deps(&lines);
        assert_eq!(
            d.requirements,
            vec!["pytest-xdist==3.5", "hypothesis>=6", "pytest-timeout"]
        );
        assert_eq!(d.extras, vec!["test", "docs"]);
        assert_eq!(d.files, vec!["requirements/ci.txt"]);
        assert_eq!(d.constraints, vec!["constraints.txt"]);
        assert!(pip_deps(&["pip install tox".to_string()]).is_empty());
    }

    #[test]
    fn nox_installs_of_the_test_session() {
        let nox = "import nox\n\n@nox.session\ndef lint(session):\n    session.install(\"ruff\")\n    session.run(\"ruff\", \"check\")\n\n@nox.session(python=[\"3.11\"])\ndef tests(session):\n    session.install(\"-r\", \"requirements-test.txt\")\n    session.install(\"-e\", \".[tests]\")\n    session.run(\"pytest\", \"-q\")\n";
        let d = nox_deps(nox, "pytest -q");
        assert_eq!(d.files, vec!["requirements-test.txt"]);
        assert_eq!(d.extras, vec!["tests"]);
        assert!(d.requirements.is_empty(), "{:?}", d.requirements);
        // stamina: a dependency group, not a requirement named `tests`.
        let nox = "@nox.session\ndef tests(session, opt_deps):\n    pkg, posargs = _get_pkg(session.posargs)\n    session.install(pkg, \"coverage[toml]\", \"--group\", \"tests\", *opt_deps)\n    session.run(\"coverage\", \"run\", \"-m\", \"pytest\", *posargs)\n";
        let d = nox_deps(nox, "coverage run -m pytest");
        assert_eq!(d.requirements, vec!["coverage[toml]"]);
        assert_eq!(d.extras, vec!["tests"]);
        let d = pip_deps(&["pip install --group=pyproject.toml:test pytest-xdist".to_string()]);
        assert_eq!(
            (d.requirements, d.extras),
            (vec!["pytest-xdist".to_string()], vec!["test".to_string()])
        );
    }

    #[test]
    fn names_are_normalised() {
        assert_eq!(
            requirement_name("Foo_Bar[x]>=1; python_version<'3.9'"),
            "foo-bar"
        );
        assert_eq!(requirement_name("zope.interface"), "zope-interface");
        assert!(is_tool("tox>=4"));
        assert!(!is_tool("pytest"));
        assert_eq!(
            project_extras(".[a, b]"),
            Some(vec!["a".into(), "b".into()])
        );
        assert_eq!(project_extras("."), Some(vec![]));
        assert_eq!(project_extras("pytest"), None);
    }

    #[test]
    fn a_hatch_test_environment_names_what_hatch_test_installs() {
        // python-ulid 3.0's hatch.toml.
        let hatch = "[envs.default]\nfeatures = [\"pydantic\"]\n\n[envs.hatch-test]\nextra-dependencies = [\n  \"freezegun==1.5.*\",\n]\nfeatures = [\n  \"pydantic\"\n]\n";
        let files: BTreeMap<String, String> =
            [("hatch.toml".to_string(), hatch.to_string())].into();
        let d = hatch_deps(&files, "hatch-test").unwrap();
        assert_eq!(
            d.requirements,
            ["pytest", "pytest-mock", "freezegun==1.5.*"]
        );
        assert_eq!(d.extras, ["pydantic"]);
        assert!(d.source.contains("hatch.toml"), "{}", d.source);
        let py = "[tool.hatch.envs.test]\ndependencies = [\"pytest\", \"hypothesis\"]\n";
        let files: BTreeMap<String, String> =
            [("pyproject.toml".to_string(), py.to_string())].into();
        assert_eq!(
            hatch_deps(&files, "test").unwrap().requirements,
            ["pytest", "hypothesis"]
        );
        assert!(hatch_deps(&files, "hatch-test").is_none());
    }
}
