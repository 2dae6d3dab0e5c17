//! Added source lines that reach into the test runner or end the test process: pattern
//! scans of single lines, apart from the path rules.

use std::sync::LazyLock;

use regex::Regex;

use super::{PolicyConfig, Rule};

pub(super) static LINE_RULES: LazyLock<Vec<(Rule, Regex, &'static str, bool)>> =
    LazyLock::new(|| {
        // (rule, pattern, why, is-plain-pytest-import)
        [
            (
                Rule::PytestTamper,
                r"^\s*(import|from)\s+(_pytest|pluggy)\b",
                "imports pytest's internals",
                false,
            ),
            (
                Rule::PytestTamper,
                r"\b_pytest\s*\.",
                "reaches into pytest's internals",
                false,
            ),
            (
                Rule::PytestTamper,
                r#"(__import__|import_module)\s*\(\s*['"](_?pytest|pluggy|unittest)"#,
                "imports the test framework dynamically",
                false,
            ),
            (
                Rule::PytestTamper,
                r#"sys\s*\.\s*modules\s*\[\s*['"](_?pytest|pluggy|unittest|builtins)"#,
                "replaces the test framework in sys.modules",
                false,
            ),
            (
                Rule::PytestTamper,
                r"\b(pytest|unittest|builtins|__builtins__)(\s*\.\s*\w+)+\s*=[^=]",
                "monkeypatches the test framework or builtins",
                false,
            ),
            (
                Rule::PytestTamper,
                r"\bsetattr\s*\(\s*(pytest|_pytest|unittest|builtins)\b",
                "monkeypatches the test framework or builtins",
                false,
            ),
            (
                Rule::PytestTamper,
                r"^\s*(import|from)\s+pytest\b",
                "imports pytest outside the tests",
                true,
            ),
            (
                Rule::ProcessExit,
                r"\bos\s*\.\s*_exit\s*\(",
                "exits the interpreter without cleanup, so no test report is written",
                false,
            ),
        ]
        .into_iter()
        .filter_map(|(r, p, w, plain)| Regex::new(p).ok().map(|re| (r, re, w, plain)))
        .collect()
    });

static RUST_EXIT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"process\s*::\s*exit\b|libc\s*::\s*_?exit\b|\bfn\s+_?exit\s*\(|\bSYS_exit").ok()
});
static NODE_EXIT: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r#"process\s*\.\s*(exit|reallyExit|abort|kill)\b|process\s*\[\s*['"`](exit|reallyExit|abort|kill)"#).ok()
});

/// Code under test that ends the test process: cargo-nextest counts a test whose process
/// exits 0 as passed, and jest's reporter never sees the run finish. Rust `.rs` and Node
/// sources outside the tests.
pub(super) fn lang_exit_scan(
    kind: crate::sandbox::lang::ProjectKind,
    path: &str,
    line: &str,
) -> Option<&'static str> {
    use crate::sandbox::lang::ProjectKind;
    let (re, why) = match kind {
        ProjectKind::Rust if path.ends_with(".rs") => (
            &*RUST_EXIT,
            "ending the process from the code under test makes a test runner report it as passed",
        ),
        ProjectKind::Node
            if [".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx"]
                .iter()
                .any(|e| path.ends_with(e)) =>
        {
            (
                &*NODE_EXIT,
                "ending or signalling the process from the code under test cuts the test run short",
            )
        }
        _ => return None,
    };
    re.as_ref()
        .is_some_and(|re| re.is_match(line))
        .then_some(why)
}

pub(super) fn scan_line(line: &str, cfg: &PolicyConfig) -> Option<(Rule, &'static str)> {
    LINE_RULES
        .iter()
        .find(|(_, re, _, plain)| !(*plain && cfg.allow_pytest_imports) && re.is_match(line))
        .map(|(r, _, w, _)| (*r, *w))
}
