//! Failed-job logs → failing test ids and the test command (pure).
//!
//! GitHub job logs prefix every line with an ISO timestamp and wrap each step in
//! `##[group]Run <command>`; test runners colour their output. Both are stripped first.

use std::sync::LazyLock;

use regex::Regex;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framework {
    Pytest,
    Cargo,
    Nextest,
    Jest,
    Vitest,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Extracted {
    pub framework: Option<Framework>,
    /// Failing test ids in the runner's own notation, in order of first appearance.
    pub failing_tests: Vec<String>,
    /// The step command that ran the tests, when recognisable.
    pub test_cmd: Option<String>,
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
    } else if c.contains("pytest") || c.contains("tox") {
        Some(Framework::Pytest)
    } else if c.contains("vitest") {
        Some(Framework::Vitest)
    } else if c.contains("jest") || c.contains("npm test") || c.contains("yarn test") {
        Some(Framework::Jest)
    } else {
        None
    }
}

/// Extract from one or more concatenated job logs.
pub fn extract(log: &str) -> Extracted {
    let mut out = Extracted::default();
    let mut lines = log.lines().map(clean).peekable();
    let mut in_cargo_failures = false;
    let mut seen_fw: Option<Framework> = None;
    while let Some(line) = lines.next() {
        // Step header: `##[group]Run <cmd>`; a multi-line script continues on the lines
        // after it until the `shell:`/`##[endgroup]` block.
        if let Some(cmd) = line.strip_prefix("##[group]Run ") {
            let cmd = cmd.trim().to_string();
            if out.test_cmd.is_none() && framework_of_cmd(&cmd).is_some() {
                seen_fw = framework_of_cmd(&cmd);
                out.test_cmd = Some(cmd);
            } else if out.test_cmd.is_none() {
                // Look inside the multi-line script.
                while let Some(next) = lines.peek() {
                    if next.starts_with("##[") || next.starts_with("shell:") {
                        break;
                    }
                    let n = next.trim().to_string();
                    lines.next();
                    if out.test_cmd.is_none() && framework_of_cmd(&n).is_some() {
                        seen_fw = framework_of_cmd(&n);
                        out.test_cmd = Some(n);
                    }
                }
            }
            continue;
        }
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

    #[test]
    fn pytest_with_timestamps_and_colour() {
        let log = "2026-01-02T03:04:05.1234567Z ##[group]Run python -m pytest -q tests\n\
                   2026-01-02T03:04:05.1234567Z shell: /usr/bin/bash -e {0}\n\
                   2026-01-02T03:04:06.0000000Z \x1b[31mFAILED\x1b[0m tests/test_a.py::test_add - assert 1 == 2\n\
                   2026-01-02T03:04:06.0000000Z FAILED tests/test_a.py::TestX::test_p[1-2]\n\
                   2026-01-02T03:04:06.0000000Z FAILED tests/test_a.py::test_add - again\n";
        let e = extract(log);
        assert_eq!(e.framework, Some(Framework::Pytest));
        assert_eq!(e.test_cmd.as_deref(), Some("python -m pytest -q tests"));
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
        assert_eq!(e.test_cmd.as_deref(), Some("pytest -v"));
        assert_eq!(e.failing_tests, vec!["tests/test_b.py::test_x"]);
    }

    #[test]
    fn cargo_test() {
        let log = "##[group]Run cargo test --all\nrunning 2 tests\ntest math::adds ... ok\ntest math::subtracts ... FAILED\n\nfailures:\n\n---- math::subtracts stdout ----\npanicked\n\nfailures:\n    math::subtracts\n    math::other\n\ntest result: FAILED. 1 passed; 1 failed\n";
        let e = extract(log);
        assert_eq!(e.framework, Some(Framework::Cargo));
        assert_eq!(e.test_cmd.as_deref(), Some("cargo test --all"));
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
