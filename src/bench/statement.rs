//! Bug reports for generated tasks, written only from what a user would see (failing test
//! names and their assertion messages), and the leak check that keeps the answer out of them.

use regex::Regex;

use crate::bench::mutate::Mutation;

/// A failing test as the report shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct FailingTest {
    pub node_id: String,
    /// The assertion or exception message (JUnit `message`), without traceback.
    pub message: Option<String>,
}

const MAX_LISTED: usize = 12;
const MAX_WITH_OUTPUT: usize = 6;
const MAX_MESSAGE_CHARS: usize = 600;

/// The problem statement: which tests fail and (with `with_output`) what they report.
pub fn problem_statement(failing: &[FailingTest], total_tests: usize, with_output: bool) -> String {
    let mut s = format!(
        "Running the test suite, {} of {} tests fail:\n\n",
        failing.len(),
        total_tests
    );
    for t in failing.iter().take(MAX_LISTED) {
        s.push_str(&format!("- `{}`\n", t.node_id));
    }
    if failing.len() > MAX_LISTED {
        s.push_str(&format!("- ... and {} more\n", failing.len() - MAX_LISTED));
    }
    if with_output {
        let shown: Vec<&FailingTest> = failing
            .iter()
            .filter(|t| t.message.as_deref().is_some_and(|m| !m.trim().is_empty()))
            .take(MAX_WITH_OUTPUT)
            .collect();
        if !shown.is_empty() {
            s.push_str("\nWhat the failing tests report:\n");
            for t in shown {
                let msg = t.message.as_deref().unwrap_or("").trim();
                let mut clipped: String = msg.chars().take(MAX_MESSAGE_CHARS).collect();
                if clipped.len() < msg.len() {
                    clipped.push_str(" [...]");
                }
                s.push_str(&format!("\n`{}`:\n```\n{}\n```\n", t.node_id, clipped));
            }
        }
    }
    s.push_str(
        "\nThe other tests pass. The tests are correct: fix the library code so that they all pass.\n",
    );
    s
}

/// What a report gives away about the injected bug.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Leak {
    /// The mutated file, by path, base name or module name.
    File(String),
    /// The mutated line number.
    Line(usize),
    /// A line of the changed code (before or after the mutation).
    Code(String),
}

/// Lines shorter than this (trimmed) are too generic to count as leaking (`pass`, `return x`).
const MIN_CODE_CHARS: usize = 12;

/// Every way `report` names the file, the line or the changed code of `m` (applied to `source`).
pub fn leaks(report: &str, m: &Mutation, source: &str) -> Vec<Leak> {
    let mutant = m.apply(source).unwrap_or_default();
    let code: Vec<String> = changed_lines(source, m.start, m.end)
        .into_iter()
        .chain(changed_lines(
            &mutant,
            m.start,
            m.start + m.replacement.len(),
        ))
        .collect();
    leaks_of_change(report, &m.file, &[m.line], &code)
}

/// Every way `report` names `file`, one of its changed `lines` (1-based) or a line of the
/// changed `code` (before or after the change): the check behind [`leaks`], for any change.
pub fn leaks_of_change(report: &str, file: &str, lines: &[usize], code: &[String]) -> Vec<Leak> {
    let mut found = Vec::new();
    let base = file.rsplit('/').next().unwrap_or(file);
    let module = file.strip_suffix(".py").unwrap_or(file).replace('/', ".");
    let mut names = vec![file.to_string()];
    if base != "__init__.py" {
        names.push(base.to_string());
        names.push(module);
    }
    for name in names {
        let re = format!(r"(?:^|[^\w.]){}(?:$|[^\w])", regex::escape(&name));
        if Regex::new(&re).is_ok_and(|r| r.is_match(report)) {
            found.push(Leak::File(name));
        }
    }
    for &line in lines {
        let line_res = [format!(r"(?i)\bline\s+{line}\b"), format!(r"\.py:{line}\b")];
        if line_res
            .iter()
            .any(|re| Regex::new(re).is_ok_and(|r| r.is_match(report)))
        {
            found.push(Leak::Line(line));
        }
    }
    let norm_report = squash(report);
    for code in code {
        let c = squash(code);
        if c.chars().count() >= MIN_CODE_CHARS && norm_report.contains(&c) {
            found.push(Leak::Code(code.trim().to_string()));
        }
    }
    found.dedup();
    found
}

/// Whitespace runs collapsed to one space, trimmed.
fn squash(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The full lines of `text` that overlap bytes `start..end`.
fn changed_lines(text: &str, start: usize, end: usize) -> Vec<String> {
    let start = start.min(text.len());
    let end = end.clamp(start, text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[end..].find('\n').map_or(text.len(), |i| end + i);
    text[line_start..line_end]
        .lines()
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::mutate::{Operator, mutations};

    const SRC: &str = "def clamp(value, low, high):\n    if value > high:\n        return high\n    return value\n";

    fn flip() -> Mutation {
        mutations("minilib/core.py", SRC)
            .unwrap()
            .into_iter()
            .find(|m| m.operator == Operator::FlipComparison)
            .unwrap()
    }

    fn failing() -> Vec<FailingTest> {
        vec![
            FailingTest {
                node_id: "tests/test_core.py::test_clamp_edges".into(),
                message: Some("assert 10 == 11\n +  where 10 = clamp(11, 0, 10)".into()),
            },
            FailingTest {
                node_id: "tests/test_core.py::test_other".into(),
                message: None,
            },
        ]
    }

    #[test]
    fn statement_lists_tests_and_messages_only() {
        let s = problem_statement(&failing(), 40, true);
        assert!(s.starts_with("Running the test suite, 2 of 40 tests fail:"));
        assert!(s.contains("- `tests/test_core.py::test_clamp_edges`\n"));
        assert!(s.contains("assert 10 == 11"));
        assert!(
            !s.contains("`tests/test_core.py::test_other`:"),
            "no empty message block"
        );
        let names_only = problem_statement(&failing(), 40, false);
        assert!(!names_only.contains("assert 10"));
        assert!(
            leaks(&s, &flip(), SRC).is_empty(),
            "{:?}",
            leaks(&s, &flip(), SRC)
        );
    }

    #[test]
    fn long_lists_and_messages_are_clipped() {
        let many: Vec<FailingTest> = (0..20)
            .map(|i| FailingTest {
                node_id: format!("t.py::test_{i}"),
                message: Some("x".repeat(2000)),
            })
            .collect();
        let s = problem_statement(&many, 100, true);
        assert!(s.contains("... and 8 more"));
        assert!(s.contains(" [...]"));
        assert!(s.len() < 6 * 700 + 2000, "{}", s.len());
    }

    #[test]
    fn leak_check_catches_file_line_and_code() {
        let m = flip();
        assert_eq!(m.line, 2);
        let cases = [
            (
                "see minilib/core.py for details",
                Leak::File("minilib/core.py".into()),
            ),
            ("error in core.py", Leak::File("core.py".into())),
            (
                "<function minilib.core.clamp>",
                Leak::File("minilib.core".into()),
            ),
            ("it breaks at Line 2 somewhere", Leak::Line(2)),
            ("x.py:2: AssertionError", Leak::Line(2)),
            (
                ">   if value  >  high:",
                Leak::Code("if value > high:".into()),
            ),
            (
                "the code says if value >= high:",
                Leak::Code("if value >= high:".into()),
            ),
        ];
        for (report, want) in cases {
            let got = leaks(report, &m, SRC);
            assert!(got.contains(&want), "{report:?}: {got:?}");
        }
        // Near misses are not leaks: other files, other lines, generic text.
        for clean in [
            "tests/test_core.py::test_clamp failed",
            "score.py and line 21 and x.py:20",
            "assert clamp(11, 0, 10) == 10",
        ] {
            assert!(
                leaks(clean, &m, SRC).is_empty(),
                "{clean:?}: {:?}",
                leaks(clean, &m, SRC)
            );
        }
    }
}
