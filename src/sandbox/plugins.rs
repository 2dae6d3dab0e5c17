//! pytest plugins the repository's own pytest configuration cannot run without (pure): an
//! `addopts` option only a plugin defines (`--cov`, `-n`, `--timeout`), or an ini key only a
//! plugin reads (`asyncio_mode`, `timeout`, `env`). CI installs them from a requirements file
//! a checkout may not carry (an sdist, a monorepo's root); without them every run ends
//! `unrecognized arguments` (exit 4) or fails each async test. Prepare adds them to the test
//! dependencies, and says so.

use std::collections::BTreeMap;

use super::ci_text::ini;

/// The pytest configuration: `addopts` and the other keys, from the file pytest itself would
/// read first (pytest.ini, pyproject's `[tool.pytest.ini_options]`, tox.ini's `[pytest]`,
/// setup.cfg's `[tool:pytest]`), with where it came from.
pub fn pytest_config(
    files: &BTreeMap<String, String>,
) -> Option<(String, BTreeMap<String, String>)> {
    if let Some(t) = files.get("pytest.ini")
        && let Some(s) = ini(t).remove("pytest")
    {
        return Some(("pytest.ini".into(), s));
    }
    if let Some(t) = files.get("pyproject.toml")
        && let Ok(doc) = toml::from_str::<toml::Value>(t)
        && let Some(opts) = doc
            .get("tool")
            .and_then(|t| t.get("pytest"))
            .and_then(|p| p.get("ini_options"))
            .and_then(|o| o.as_table())
    {
        let keys = opts
            .iter()
            .map(|(k, v)| {
                let text = match v {
                    toml::Value::String(s) => s.clone(),
                    toml::Value::Array(a) => a
                        .iter()
                        .map(|x| {
                            x.as_str()
                                .map(str::to_string)
                                .unwrap_or_else(|| x.to_string())
                        })
                        .collect::<Vec<_>>()
                        .join(" "),
                    other => other.to_string(),
                };
                (k.clone(), text)
            })
            .collect();
        return Some(("pyproject.toml [tool.pytest.ini_options]".into(), keys));
    }
    for (file, section) in [("tox.ini", "pytest"), ("setup.cfg", "tool:pytest")] {
        if let Some(t) = files.get(file)
            && let Some(s) = ini(t).remove(section)
        {
            return Some((format!("{file} [{section}]"), s));
        }
    }
    None
}

/// The plugins the configuration needs (requirement, why), each once.
pub fn implied(files: &BTreeMap<String, String>) -> Vec<(String, String)> {
    let Some((from, keys)) = pytest_config(files) else {
        return Vec::new();
    };
    let addopts: Vec<String> = keys
        .get("addopts")
        .map(|a| a.split_whitespace().map(str::to_string).collect())
        .unwrap_or_default();
    let opt = |pred: &dyn Fn(&str) -> bool| addopts.iter().find(|o| pred(o)).cloned();
    let mut out: Vec<(String, String)> = Vec::new();
    let mut need = |req: &str, why: String| {
        if !out.iter().any(|(r, _)| r == req) {
            out.push((req.to_string(), format!("{from} {why}")));
        }
    };
    if let Some(o) = opt(&|o| o.starts_with("--cov") || o.starts_with("--no-cov")) {
        need("pytest-cov", format!("addopts {o}"));
    }
    if let Some(o) = opt(&|o| {
        o == "-n"
            || o.starts_with("--numprocesses")
            || o.starts_with("--dist")
            || (o.starts_with("-n")
                && o[2..].chars().all(|c| c.is_ascii_alphanumeric())
                && o.len() > 2)
    }) {
        need("pytest-xdist", format!("addopts {o}"));
    }
    if let Some(o) = opt(&|o| o.starts_with("--timeout")) {
        need("pytest-timeout", format!("addopts {o}"));
    }
    if let Some(o) = opt(&|o| o.starts_with("--reruns")) {
        need("pytest-rerunfailures", format!("addopts {o}"));
    }
    if let Some(o) = opt(&|o| o.starts_with("--benchmark")) {
        need("pytest-benchmark", format!("addopts {o}"));
    }
    if let Some(o) = opt(&|o| o.starts_with("--doctest-plus") || o.starts_with("--doctest-rst")) {
        need("pytest-doctestplus", format!("addopts {o}"));
    }
    for (key, req) in [
        ("asyncio_mode", "pytest-asyncio"),
        ("asyncio_default_fixture_loop_scope", "pytest-asyncio"),
        ("timeout", "pytest-timeout"),
        ("timeout_method", "pytest-timeout"),
        ("env", "pytest-env"),
        ("mock_use_standalone_module", "pytest-mock"),
        ("doctest_plus", "pytest-doctestplus"),
    ] {
        if keys.contains_key(key) {
            need(req, format!("sets `{key}`"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(list: &[(&str, &str)]) -> BTreeMap<String, String> {
        list.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn options_and_keys_only_a_plugin_defines_need_it() {
        let cfg = "[tool:pytest]\naddopts = --cache-clear --no-cov-on-fail --cov=async_lru -n auto\nasyncio_mode = auto\ntimeout = 15\nfilterwarnings = error\n";
        let got = implied(&files(&[("setup.cfg", cfg)]));
        let reqs: Vec<&str> = got.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(
            reqs,
            [
                "pytest-cov",
                "pytest-xdist",
                "pytest-asyncio",
                "pytest-timeout"
            ]
        );
        assert!(
            got[0]
                .1
                .contains("setup.cfg [tool:pytest] addopts --no-cov-on-fail"),
            "{got:?}"
        );
        let py =
            "[tool.pytest.ini_options]\naddopts = [\"--timeout=10\", \"-ra\"]\nenv = [\"A=1\"]\n";
        let got = implied(&files(&[("pyproject.toml", py), ("setup.cfg", cfg)]));
        let reqs: Vec<&str> = got.iter().map(|(r, _)| r.as_str()).collect();
        assert_eq!(
            reqs,
            ["pytest-timeout", "pytest-env"],
            "pyproject is read first"
        );
        assert!(
            implied(&files(&[(
                "setup.cfg",
                "[tool:pytest]\naddopts = -ra -q\n"
            )]))
            .is_empty()
        );
        assert!(implied(&files(&[])).is_empty());
    }
}
