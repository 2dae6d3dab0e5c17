//! The model sees its task only: a test run's output with the failures of tests that are not
//! the targets (pre-existing failures, a flaky neighbour) taken out — their sections, their
//! short-summary lines — and one line counting and naming them instead. A small model shown a
//! pre-existing failure's assertion chases it. Pure.

use crate::agent::context::TestRef;

/// pytest's section title line: `____ test_x[LRU] ____`.
pub(crate) fn section_title(line: &str) -> Option<&str> {
    let t = line.trim_end();
    let inner = t.strip_prefix("__")?.trim_start_matches('_');
    let inner = inner.strip_suffix("__")?.trim_end_matches('_');
    let inner = inner.strip_prefix(' ')?.strip_suffix(' ')?;
    (!inner.is_empty()).then_some(inner)
}

/// `=== FAILURES ===`, `=== short test summary info ===`: a banner ends a section.
pub(crate) fn is_banner(line: &str) -> bool {
    line.starts_with("====") || line.starts_with("!!!!")
}

/// The test a section title or summary line is about, among `ids`.
fn about<'a>(text: &str, refs: &'a [TestRef]) -> Option<&'a TestRef> {
    let bare = text
        .strip_prefix("ERROR at setup of ")
        .or_else(|| text.strip_prefix("ERROR at teardown of "))
        .unwrap_or(text);
    refs.iter().find(|r| bare == r.head_line())
}

/// `output` for a model whose task is `targets`: sections and summary lines of the `others`
/// (failing tests that are not targets) removed, a line naming them added. Unchanged when
/// there are no others.
pub fn for_targets(output: &str, targets: &[String], others: &[String]) -> String {
    let others: Vec<&String> = others.iter().filter(|o| !targets.contains(o)).collect();
    if others.is_empty() {
        return output.to_string();
    }
    let other_refs: Vec<TestRef> = others.iter().filter_map(|o| TestRef::parse(o)).collect();
    let target_refs: Vec<TestRef> = targets.iter().filter_map(|t| TestRef::parse(t)).collect();
    let mut out: Vec<&str> = Vec::new();
    let mut skipping = false;
    for line in output.lines() {
        if let Some(title) = section_title(line) {
            // A section about another failing test is left out until the next title or banner
            // (a title that is also a target's — same name, other file — is kept).
            skipping = about(title, &other_refs).is_some() && about(title, &target_refs).is_none();
            if !skipping {
                out.push(line);
            }
            continue;
        }
        if is_banner(line) {
            skipping = false;
        }
        if skipping {
            continue;
        }
        let names_other = |l: &str| {
            let rest = l
                .strip_prefix("FAILED ")
                .or_else(|| l.strip_prefix("ERROR "))
                .or_else(|| l.strip_prefix("XPASS "));
            match rest {
                Some(r) => {
                    let id = r.split(" - ").next().unwrap_or(r).trim();
                    others.iter().any(|o| o.as_str() == id)
                }
                None => false,
            }
        };
        if names_other(line) {
            continue;
        }
        out.push(line);
    }
    let mut text = out.join("\n");
    text.push_str(&format!(
        "\n({} other failing test(s) left out, not your task: {})\n",
        others.len(),
        others
            .iter()
            .take(10)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
            + if others.len() > 10 { ", …" } else { "" }
    ));
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUT: &str = "\
patchloop: pytest project 8.3.0
..FF.
=================================== FAILURES ===================================
____________________________ test_evicts[LRU] _____________________________
    def test_evicts(policy):
>       assert c.get('a') is None
E       AssertionError: assert 1 is None
tests/test_c.py:12: AssertionError
_____________________________ TestPickle.test_state _____________________________
    def test_state(self):
>       assert '__getstate__' == False
E       AssertionError: assert '__getstate__' == False
tests/test_p.py:30: AssertionError
=========================== short test summary info ============================
FAILED tests/test_c.py::test_evicts[LRU] - AssertionError: assert 1 is None
FAILED tests/test_p.py::TestPickle::test_state - AssertionError: assert '__getstate__' == False
2 failed, 3 passed in 0.02s";

    #[test]
    fn a_pre_existing_failure_is_named_not_shown() {
        let t = for_targets(
            OUT,
            &["tests/test_c.py::test_evicts[LRU]".into()],
            &["tests/test_p.py::TestPickle::test_state".into()],
        );
        assert!(!t.contains("__getstate__"), "{t}");
        assert!(t.contains("assert 1 is None"), "{t}");
        assert!(
            t.contains("FAILED tests/test_c.py::test_evicts[LRU]"),
            "{t}"
        );
        assert!(t.contains("2 failed, 3 passed"), "{t}");
        assert!(
            t.contains("(1 other failing test(s) left out, not your task: tests/test_p.py::TestPickle::test_state)"),
            "{t}"
        );
        // No others: the output as it was.
        assert_eq!(for_targets(OUT, &["a.py::b".into()], &[]), OUT);
    }
}
