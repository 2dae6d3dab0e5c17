//! Python function definitions by tree-sitter (rows, docstring, body), and the indentation
//! and token helpers the edits use.

use tree_sitter::Node;

/// A function definition found by tree-sitter: 0-based rows.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct PyDef {
    pub(super) name: String,
    /// First row (the first decorator, if any).
    pub(super) start: usize,
    /// The `def` row.
    pub(super) def_row: usize,
    pub(super) end: usize,
    /// Rows of the docstring, if the body starts with one.
    pub(super) doc: Option<(usize, usize)>,
    /// Row of the first body statement after the docstring (None: the body is the docstring
    /// alone, or on the `def` line).
    pub(super) body_row: Option<usize>,
}

pub(super) fn py_defs(src: &str) -> Vec<PyDef> {
    let Some(tree) = crate::agent::context::parse(src) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    fn walk(n: Node, src: &str, out: &mut Vec<PyDef>) {
        if n.kind() == "function_definition" {
            let outer = match n.parent() {
                Some(p) if p.kind() == "decorated_definition" => p,
                _ => n,
            };
            let name = n
                .child_by_field_name("name")
                .and_then(|c| c.utf8_text(src.as_bytes()).ok())
                .unwrap_or("")
                .to_string();
            let (mut doc, mut body_row) = (None, None);
            if let Some(body) = n.child_by_field_name("body") {
                let mut c = body.walk();
                let stmts: Vec<Node> = body.named_children(&mut c).collect();
                let mut rest = stmts.as_slice();
                if let Some(first) = stmts.first()
                    && first.kind() == "expression_statement"
                    && first.named_child(0).is_some_and(|s| s.kind() == "string")
                {
                    doc = Some((first.start_position().row, first.end_position().row));
                    rest = &stmts[1..];
                }
                body_row = rest.first().map(|s| s.start_position().row);
            }
            out.push(PyDef {
                name,
                start: outer.start_position().row,
                def_row: n.start_position().row,
                end: n.end_position().row,
                doc,
                body_row,
            });
        }
        let mut c = n.walk();
        for child in n.named_children(&mut c) {
            walk(child, src, out);
        }
    }
    walk(tree.root_node(), src, &mut out);
    out
}

/// Rows (0-based, within `func`) of the docstring of the function that starts `func`.
pub(super) fn docstring_lines(func: &str) -> Option<(usize, usize)> {
    py_defs(func).first().and_then(|d| d.doc)
}

pub(super) fn indent_of(line: &str) -> &str {
    &line[..line.len() - line.trim_start().len()]
}

/// Remove the common leading whitespace of the non-blank lines.
pub(super) fn dedent(lines: &[&str]) -> Vec<String> {
    let common = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| indent_of(l).len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                String::new()
            } else {
                l[common.min(indent_of(l).len())..].to_string()
            }
        })
        .collect()
}

/// The bodies of the compound statements in `src` (`if`/`elif`/`else`, `for`, `while`,
/// `try`/`except`/`finally`, `with`): 0-based first and last rows of each `block`, inner
/// blocks after the ones that hold them.
pub(super) fn py_blocks(src: &str) -> Vec<(usize, usize)> {
    let Some(tree) = crate::agent::context::parse(src) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut stack = vec![tree.root_node()];
    while let Some(n) = stack.pop() {
        if n.kind() == "block"
            && n.parent().is_some_and(|p| {
                matches!(
                    p.kind(),
                    "if_statement"
                        | "elif_clause"
                        | "else_clause"
                        | "for_statement"
                        | "while_statement"
                        | "try_statement"
                        | "except_clause"
                        | "finally_clause"
                        | "with_statement"
                )
            })
        {
            out.push((n.start_position().row, n.end_position().row));
        }
        let mut c = n.walk();
        let children: Vec<Node> = n.named_children(&mut c).collect();
        stack.extend(children.into_iter().rev());
    }
    out
}

/// The outermost `def` whose `def` line is in `start..=end` (1-based): a ranked function's
/// node in its file's syntax tree.
pub(super) fn def_in(root: Node<'_>, start: usize, end: usize) -> Option<Node<'_>> {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        let row = n.start_position().row + 1;
        if n.kind() == "function_definition" && (start..=end).contains(&row) {
            return Some(n);
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    None
}

/// Calls `f` with each of the first `limit` ranked functions outside the tests' files
/// ([`super::Problem::code_suspects`]): its ranking, its file's text, its `def` node and its
/// body. A file that does not parse or a def without a body is skipped: what the rules read.
pub(super) fn each_suspect_def(
    problem: &super::Problem,
    limit: usize,
    mut f: impl FnMut(&crate::agent::localize::Ranked, &str, Node<'_>, Node<'_>),
) {
    for (r, src) in problem.code_suspects(limit) {
        let Some(tree) = crate::agent::context::parse(src) else {
            continue;
        };
        let Some(def) = def_in(tree.root_node(), r.loc.start, r.loc.end) else {
            continue;
        };
        let Some(body) = def.child_by_field_name("body") else {
            continue;
        };
        f(r, src, def, body);
    }
}

/// The one-line assignments of the module's own names that lines `start..=end` (1-based,
/// a function) read: 1-based lines, in file order. A module constant is computed once, at
/// import, before any test's coverage is recorded, so the spectrum never scores its line;
/// a function that reads it is where its value shows (a bounds table rebuilt with the
/// wrong column, a flag set from the wrong comparison). Top-level statements and those of
/// top-level `if`/`try` bodies count; a multi-line literal does not (one line of it is not
/// the statement). Pure.
pub(super) fn module_assignments_read(src: &str, start: usize, end: usize) -> Vec<usize> {
    let Some(parsed) = crate::verify::pysrc::Source::parse(src) else {
        return Vec::new();
    };
    // Names the function reads: identifiers in its rows, but an attribute's own name.
    let mut read = std::collections::BTreeSet::new();
    let mut stack = vec![parsed.root()];
    while let Some(n) = stack.pop() {
        let (a, b) = (n.start_position().row + 1, n.end_position().row + 1);
        if b < start || a > end {
            continue;
        }
        if n.kind() == "identifier"
            && !n.parent().is_some_and(|p| {
                p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(n)
            })
        {
            read.insert(parsed.text(n));
        }
        let mut c = n.walk();
        stack.extend(n.named_children(&mut c));
    }
    let mut out: Vec<usize> = parsed
        .module_assignments()
        .into_iter()
        .filter(|(s, name)| {
            let row = s.start_position().row + 1;
            s.start_position().row == s.end_position().row
                && !(start..=end).contains(&row)
                && read.contains(name)
        })
        .map(|(s, _)| s.start_position().row + 1)
        .collect();
    out.sort_unstable();
    out
}

/// A line's tokens ([`token_starts`]), each with the whitespace after it.
pub(super) fn line_tokens(code: &str) -> Vec<(&str, &str)> {
    let mut cuts = vec![0];
    cuts.extend(token_starts(code));
    cuts.push(code.len());
    cuts.windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| {
            let t = &code[w[0]..w[1]];
            let word = t.trim_end();
            (word, &t[word.len()..])
        })
        .collect()
}

/// Byte offsets where a line of Python's tokens start, after the first: words, runs of
/// operator characters, strings (whole), single brackets and punctuation. Pure.
pub(super) fn token_starts(code: &str) -> Vec<usize> {
    #[derive(PartialEq, Clone, Copy)]
    enum Class {
        Word,
        Op,
        Other,
    }
    let class = |c: char| {
        if c.is_alphanumeric() || c == '_' {
            Class::Word
        } else if "=!<>+-*/%&|^~@:".contains(c) {
            Class::Op
        } else {
            Class::Other
        }
    };
    let mut out = Vec::new();
    let mut prev: Option<Class> = None;
    let mut chars = code.char_indices();
    while let Some((i, c)) = chars.next() {
        if c.is_whitespace() {
            prev = None;
            continue;
        }
        let k = class(c);
        if i > 0 && (prev != Some(k) || k == Class::Other) {
            out.push(i);
        }
        prev = Some(k);
        if c == '\'' || c == '"' {
            // A string is one token: no cut inside it.
            while let Some((_, d)) = chars.next() {
                if d == '\\' {
                    chars.next();
                } else if d == c {
                    break;
                }
            }
            prev = Some(Class::Other);
        }
    }
    out
}
