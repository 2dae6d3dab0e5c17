//! The leaked-`StopIteration` rule: the report shows a `StopIteration` (raised to the caller,
//! or `RuntimeError: generator raised StopIteration`, what PEP 479 made of one inside a
//! generator since Python 3.7) and a suspect function calls `next(it)` without a default
//! outside any `try`. On an empty iterator that call ends the caller's loop, or, inside a
//! generator, crashes it: code written before 3.7 relied on the leak to stop.
//!
//! The candidate, per function:
//! - `next(it)` as a statement of its own (an item skipped, its value unused) becomes
//!   `next(it, None)`: nothing to skip is no longer an error;
//! - in a generator, a one-line statement that uses `next(it)`'s value is wrapped in
//!   `try: … except StopIteration: return`, the spelling PEP 479 gives for "stop here".
//!
//! A value used outside a generator has no fix that does not guess what the caller wants,
//! and is left to the fills. Pure; tree-sitter reads the code.

use tree_sitter::Node;

use super::Problem;
use super::edits::{FileEdit, RuleEdit};
use super::pydefs::{each_suspect_def, indent_of};

static LEAKED: std::sync::LazyLock<regex::Regex> =
    std::sync::LazyLock::new(|| regex::Regex::new(r"\bStopIteration\b").expect("static regex"));

/// Whether `n` is a `next(x)` call with one positional argument (no default).
fn bare_next(n: Node, src: &[u8]) -> bool {
    if n.kind() != "call" {
        return false;
    }
    let named_next = n
        .child_by_field_name("function")
        .is_some_and(|f| f.kind() == "identifier" && f.utf8_text(src).ok() == Some("next"));
    let Some(args) = n.child_by_field_name("arguments") else {
        return false;
    };
    let mut c = args.walk();
    let given: Vec<Node> = args
        .named_children(&mut c)
        .filter(|a| a.kind() != "comment")
        .collect();
    named_next
        && args.kind() == "argument_list"
        && matches!(given.as_slice(), [a] if !matches!(a.kind(), "list_splat" | "dictionary_splat" | "keyword_argument"))
}

/// The bare `next` calls in `n` outside any `try` and nested scope, and whether `n` yields
/// (outside nested scopes).
fn scan<'t>(n: Node<'t>, src: &[u8], calls: &mut Vec<Node<'t>>, yields: &mut bool) {
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        match ch.kind() {
            "function_definition"
            | "class_definition"
            | "lambda"
            | "generator_expression"
            | "list_comprehension"
            | "set_comprehension"
            | "dictionary_comprehension" => {}
            // A `try` around the call is the code's own handling, right or wrong.
            "try_statement" => {
                let mut y = false;
                scan(ch, src, &mut Vec::new(), &mut y);
                *yields |= y;
            }
            "yield" => {
                *yields = true;
                scan(ch, src, calls, yields);
            }
            _ => {
                if bare_next(ch, src) {
                    calls.push(ch);
                }
                scan(ch, src, calls, yields);
            }
        }
    }
}

/// The statement `n` is in: its nearest ancestor whose parent is a block.
fn statement_of(n: Node) -> Option<Node> {
    let mut cur = n;
    loop {
        let p = cur.parent()?;
        if p.kind() == "block" {
            return Some(cur);
        }
        if p.kind() == "function_definition" {
            return None;
        }
        cur = p;
    }
}

/// The candidates of the ranked functions (the first `limit`), one per function; none
/// unless the report shows a `StopIteration`.
pub(super) fn leaked_stop_iteration(problem: &Problem, limit: usize) -> Vec<RuleEdit> {
    if !LEAKED.is_match(&problem.report) {
        return Vec::new();
    }
    let mut out = Vec::new();
    each_suspect_def(problem, limit, |r, src, _def, body| {
        let b = src.as_bytes();
        let (mut calls, mut generator) = (Vec::new(), false);
        scan(body, b, &mut calls, &mut generator);
        // (start byte, end byte, replacement), in file order.
        let mut edits: Vec<(usize, usize, String)> = Vec::new();
        let mut lines = std::collections::BTreeSet::new();
        for call in calls {
            let Some(stmt) = statement_of(call) else {
                continue;
            };
            let line = stmt.start_position().row + 1;
            let alone = stmt.kind() == "expression_statement"
                && stmt.named_child_count() == 1
                && stmt.named_child(0) == Some(call);
            if alone {
                let Some(args) = call.child_by_field_name("arguments") else {
                    continue;
                };
                let close = args.end_byte() - 1;
                edits.push((close, close, ", None".into()));
            } else if generator
                && stmt.start_position().row == stmt.end_position().row
                && matches!(stmt.kind(), "expression_statement")
            {
                let row_start = src[..stmt.start_byte()].rfind('\n').map_or(0, |i| i + 1);
                let row_end = src[stmt.end_byte()..]
                    .find('\n')
                    .map_or(src.len(), |i| stmt.end_byte() + i);
                let text = &src[row_start..row_end];
                let indent = indent_of(text);
                // Only a line that is the statement alone (not `x = 1; y = next(it)`).
                if text.trim() != stmt.utf8_text(b).unwrap_or_default().trim() {
                    continue;
                }
                edits.push((
                    row_start,
                    row_end,
                    format!(
                        "{indent}try:\n{indent}    {}\n{indent}except StopIteration:\n{indent}    return",
                        text.trim()
                    ),
                ));
            } else {
                continue;
            }
            lines.insert(line);
        }
        if edits.is_empty() {
            return;
        }
        edits.sort_by_key(|e| e.0);
        // Two calls on one statement: the first edit only.
        let mut content = src.to_string();
        let mut last_start = usize::MAX;
        for (start, end, rep) in edits.into_iter().rev() {
            if end > last_start {
                continue;
            }
            content.replace_range(start..end, &rep);
            last_start = start;
        }
        out.push(RuleEdit {
            rule: "leaked_stop_iteration",
            what: format!(
                "{}:{} {}: `next` without a default on line {} no longer leaks StopIteration",
                r.loc.path,
                r.loc.start,
                r.loc.name,
                lines
                    .iter()
                    .map(|l| l.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            edits: vec![FileEdit {
                path: r.loc.path.clone(),
                content,
            }],
        });
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = "E       StopIteration\ntoolz/itertoolz.py:526: StopIteration";

    #[test]
    fn a_skipped_item_gets_a_default_and_the_function_returns_the_empty_iterator() {
        let src = "import itertools\n\n\ndef interpose(el, seq):\n    \"\"\"Introduce element between each pair of elements in seq.\"\"\"\n    inposed = concat(zip(itertools.repeat(el), seq))\n    next(inposed)\n    return inposed\n";
        let p = Problem::one_suspect("t.py", "interpose", src, REPORT, (4, 8), &[7]);
        let got = leaked_stop_iteration(&p, 8);
        assert_eq!(got.len(), 1, "{got:?}");
        let c = &got[0].edits[0].content;
        assert!(
            c.contains("    next(inposed, None)\n    return inposed\n"),
            "{c}"
        );
        assert_eq!(c.matches("next(").count(), 1, "{c}");
        assert!(got[0].what.contains("line 7"), "{}", got[0].what);
        // No StopIteration in the report: the rule does not look.
        let quiet = Problem::one_suspect("t.py", "interpose", src, "AssertionError", (4, 8), &[7]);
        assert!(leaked_stop_iteration(&quiet, 8).is_empty());
    }

    #[test]
    fn a_generator_that_uses_the_value_returns_where_the_iterator_ends() {
        let src = "def pairs(seq):\n    it = iter(seq)\n    while True:\n        a = next(it)\n        b = next(it, None)\n        yield a, b\n";
        let report = "RuntimeError: generator raised StopIteration";
        let p = Problem::one_suspect("g.py", "pairs", src, report, (1, 6), &[4]);
        let got = leaked_stop_iteration(&p, 8);
        assert_eq!(got.len(), 1, "{got:?}");
        let c = &got[0].edits[0].content;
        assert!(
            c.contains("        try:\n            a = next(it)\n        except StopIteration:\n            return\n        b = next(it, None)\n"),
            "{c}"
        );
    }

    #[test]
    fn a_handled_call_or_a_value_used_outside_a_generator_proposes_nothing() {
        let handled = "def first(seq):\n    it = iter(seq)\n    try:\n        next(it)\n    except StopIteration:\n        return None\n    return it\n";
        let p = Problem::one_suspect("h.py", "first", handled, REPORT, (1, 7), &[4]);
        assert!(leaked_stop_iteration(&p, 8).is_empty());
        let used = "def first(seq):\n    x = next(iter(seq))\n    return x\n";
        let p = Problem::one_suspect("h.py", "first", used, REPORT, (1, 3), &[2]);
        assert!(leaked_stop_iteration(&p, 8).is_empty());
        // A nested function's call is its own scope's business.
        let nested = "def outer(seq):\n    def inner():\n        next(seq)\n    return inner\n";
        let p = Problem::one_suspect("h.py", "outer", nested, REPORT, (1, 4), &[2]);
        assert!(leaked_stop_iteration(&p, 8).is_empty());
    }
}
