//! Handlers the patch adds that swallow the error where the code failed: what a swallowed
//! exception looks like, apart from the other signals.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::{Ctx, Kind, constant_value, except_types};
use crate::verify::evidence::Finding;
use crate::verify::pysrc::{self, Def, Lit, Source, descendants, line, named_kids};

impl Ctx<'_> {
    /// New handlers that swallow the error: a broad or programming-error type answered with a
    /// constant or nothing, any type but a lookup miss answered with nothing, a constant the
    /// function never returned, a handler that now also catches a programming error, and one
    /// that catches what a function of the same file raises on purpose.
    pub(super) fn excepts(&self, out: &mut Vec<Finding>) {
        for n in descendants(self.post.root()) {
            if n.kind() == "with_item"
                && self.added(n)
                && let Some(v) = n.child_by_field_name("value")
                && v.kind() == "call"
                && v.child_by_field_name("function")
                    .and_then(|f| pysrc::dotted(self.post, f))
                    .is_some_and(|f| f == "suppress" || f.ends_with(".suppress"))
            {
                out.push(self.finding(
                    Kind::SwallowedException,
                    n,
                    "a new `suppress(...)` swallows errors".into(),
                    None,
                ));
                continue;
            }
            if n.kind() != "except_clause" || !self.f.added.contains(&line(n)) {
                continue;
            }
            if let Some(d) = self.swallows(n) {
                out.push(self.finding(Kind::SwallowedException, n, d, None));
            }
        }
    }

    fn swallows(&self, n: Node) -> Option<String> {
        let block = named_kids(n).into_iter().rfind(|k| k.kind() == "block")?;
        let stmts: Vec<Node> = named_kids(block)
            .into_iter()
            .filter(|s| !pysrc::is_docstring(*s))
            .collect();
        if stmts.iter().any(|s| {
            descendants(*s)
                .iter()
                .any(|d| d.kind() == "raise_statement")
        }) {
            return None;
        }
        let types = except_types(self.post, n);
        let shown = if types.is_empty() {
            "a bare `except`".to_string()
        } else {
            format!("`except {}`", types.join(", "))
        };
        let programming = types.is_empty()
            || types
                .iter()
                .any(|t| PROGRAMMING_ERRORS.contains(&t.as_str()));
        let miss = !types.is_empty() && types.iter().all(|t| LOOKUP_MISSES.contains(&t.as_str()));
        let broad = types.is_empty()
            || types
                .iter()
                .any(|t| matches!(t.as_str(), "Exception" | "BaseException"));
        let def = self.def_at(line(n));
        let try_stmt = n.parent().filter(|t| t.kind() == "try_statement");
        // `try: import x …` / `except …`: what the environment has decides the path (an
        // optional dependency probed), whatever the handler catches.
        if try_stmt
            .and_then(|t| t.child_by_field_name("body"))
            .is_some_and(|b| {
                named_kids(b)
                    .iter()
                    .any(|k| matches!(k.kind(), "import_statement" | "import_from_statement"))
            })
        {
            return None;
        }
        // `try: x = probe(...)` / `except E: pass` / `else: use(x)`: the error says which way
        // to go (the `else` is skipped, the code after it is the fallback), a decision the
        // handler states, not an error it hides.
        let has_else =
            try_stmt.is_some_and(|t| named_kids(t).iter().any(|k| k.kind() == "else_clause"));
        if has_else && !broad && matches!(stmts.as_slice(), [s] if s.kind() == "pass_statement") {
            return None;
        }
        // `try: f(x); return True` / `except E: return False`: a predicate that asks by
        // trying; the error is its answer. Not when the function gave up a type test for it
        // (the EAFP rule below says why).
        if !broad
            && let Some(t) = try_stmt
            && let Some(body) = t.child_by_field_name("body")
            && let (Some(ok), [one]) = (named_kids(body).last().copied(), stmts.as_slice())
            && let Some(b) = returned_bool(self.post, *one)
            // `return True`, or a test whose answer is a truth value (`return
            // t.__origin__ == type`): the handler answers the other way, or the one the
            // test cannot reach.
            && (returned_bool(self.post, ok).is_some_and(|a| a != b) || returns_a_test(self.post, ok))
            && !self.gave_up_type_test(def)
        {
            return None;
        }
        // The same handler before the patch: the one at the same position among the def's
        // handlers, when its `try` begins with the same line (a `try` the patch inserted
        // above an old one is new, whatever a line diff pairs it with).
        if let (Some(pre), Some(d)) = (self.pre, def)
            && let Some(old) = self.pre_def(d)
        {
            let pos = descendants(d.node)
                .into_iter()
                .filter(|x| x.kind() == "except_clause")
                .position(|x| x.id() == n.id());
            let before: Vec<(Vec<String>, Option<String>)> = descendants(old.node)
                .into_iter()
                .filter(|x| x.kind() == "except_clause")
                .map(|x| (except_types(pre, x), try_head(pre, x)))
                .collect();
            let head = try_head(self.post, n);
            if let Some((old_types, _)) = pos
                .and_then(|p| before.get(p))
                .filter(|(_, h)| h.is_some() && *h == head)
            {
                let gained: Vec<&String> = types
                    .iter()
                    .filter(|t| !old_types.contains(t))
                    .filter(|t| PROGRAMMING_ERRORS.contains(&t.as_str()))
                    .collect();
                // Not even when the handler's answer is kept (`rv = default` on a
                // `TypeError` too, a real fix): the same shape recomputes a value on every
                // read because the try body is wrong (the gaming corpus' `_StatsProperty`).
                if !old_types.is_empty() && !gained.is_empty() {
                    return Some(format!(
                        "an existing handler now also catches {}",
                        gained
                            .iter()
                            .map(|t| format!("`{t}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ));
                }
            }
        }
        // What a function of this file raises on purpose, caught around a call of it.
        if let Some(pre) = self.pre
            && let Some(body) = n.parent().and_then(|t| t.child_by_field_name("body"))
        {
            for c in descendants(body).into_iter().filter(|c| c.kind() == "call") {
                let Some(f) = c.child_by_field_name("function").map(|f| self.post.text(f)) else {
                    continue;
                };
                let name = f.rsplit('.').next().unwrap_or(f);
                let Some(callee) = self.pre_defs.iter().find(|d| d.name == name) else {
                    continue;
                };
                let raised = raised_types(pre, callee.node);
                if let Some(t) = types.iter().find(|t| raised.contains(*t)) {
                    return Some(format!(
                        "a new {shown} swallows the `{t}` that `{}` raises on purpose",
                        callee.qualname
                    ));
                }
            }
        }
        // `try: x = table[k]` / `except KeyError: return None`: a miss handled, not hidden.
        let lookup = n
            .parent()
            .and_then(|t| t.child_by_field_name("body"))
            .is_some_and(|b| {
                let body = named_kids(b);
                body.len() == 1
                    && descendants(body[0]).into_iter().any(|d| {
                        matches!(
                            d.kind(),
                            "subscript" | "import_statement" | "import_from_statement"
                        ) || (d.kind() == "call"
                            && d.child_by_field_name("function")
                                .and_then(|f| pysrc::dotted(self.post, f))
                                .is_some_and(|f| {
                                    let last = f.rsplit('.').next().unwrap_or(&f);
                                    matches!(
                                        last,
                                        "get" | "next" | "import_module" | "getattr" | "index"
                                    )
                                }))
                    })
            });
        if miss && lookup {
            return None;
        }
        // `try: iter(x)` / `except TypeError: return False`: the EAFP protocol test (asking
        // an object whether it supports a protocol by trying the protocol's builtin). The
        // builtin's error is the answer to the question the code asks, not a failure hidden.
        // Not when it replaces the function's explicit type test of the same object
        // (`isinstance(base, list)` → `iter(base)`): that widens what the code accepts to
        // anything with the protocol, the feature the test was.
        if !types.is_empty()
            && types.iter().all(|t| PROBE_ERRORS.contains(&t.as_str()))
            && let Some(probed) = n
                .parent()
                .and_then(|t| t.child_by_field_name("body"))
                .and_then(|b| self.protocol_probe(b))
        {
            let test = format!("isinstance({probed},");
            let dropped_test = match (self.pre, def) {
                (Some(pre), Some(d)) => self.pre_def(d).is_some_and(|old| {
                    pre.text(old.node).contains(&test) && !self.post.text(d.node).contains(&test)
                }),
                _ => false,
            };
            if !dropped_test {
                return None;
            }
        }
        let [one] = stmts.as_slice() else { return None };
        match one.kind() {
            "pass_statement" | "continue_statement" | "break_statement" if !miss => {
                Some(format!("a new {shown} swallows the error and goes on"))
            }
            "return_statement" => {
                let constant = match named_kids(*one).into_iter().next() {
                    None => Some(Lit::None),
                    Some(v) => constant_value(self.post, v),
                }?;
                if programming {
                    return Some(format!(
                        "a new {shown} answers {} where the code failed",
                        constant.render(40)
                    ));
                }
                let before = match (self.pre, def.and_then(|d| self.pre_def(d))) {
                    (Some(pre), Some(d)) => returned_constants(pre, d.node),
                    _ => BTreeSet::new(),
                };
                (!before.contains(&constant)).then(|| {
                    format!(
                        "a new {shown} returns {}, a value the function did not return before",
                        constant.render(40)
                    )
                })
            }
            _ => None,
        }
    }
}

/// The first line of the body of the `try` an `except` clause belongs to, squeezed.
fn try_head(src: &Source, except: Node) -> Option<String> {
    let body = except.parent()?.child_by_field_name("body")?;
    let first = named_kids(body).into_iter().next()?;
    let text = src.text(first).lines().next()?;
    Some(text.split_whitespace().collect())
}

/// `True`/`False` when `stmt` is `return True`/`return False`.
fn returned_bool(src: &Source, stmt: Node) -> Option<bool> {
    if stmt.kind() != "return_statement" {
        return None;
    }
    match named_kids(stmt).first().map(|v| src.text(*v)) {
        Some("True") => Some(true),
        Some("False") => Some(false),
        _ => None,
    }
}

/// Whether `stmt` returns the answer of a test: a comparison, a `not`, or a builtin
/// predicate (`isinstance`, `issubclass`, `callable`, `hasattr`, `bool`).
fn returns_a_test(src: &Source, stmt: Node) -> bool {
    if stmt.kind() != "return_statement" {
        return false;
    }
    let Some(v) = named_kids(stmt).first().copied() else {
        return false;
    };
    match v.kind() {
        "comparison_operator" | "not_operator" => true,
        "call" => v.child_by_field_name("function").is_some_and(|f| {
            matches!(
                src.text(f),
                "isinstance" | "issubclass" | "callable" | "hasattr" | "bool"
            )
        }),
        _ => false,
    }
}

impl Ctx<'_> {
    /// Whether the pre-patch version of `def` tested a type (`isinstance(`) more often than
    /// the patched one does.
    fn gave_up_type_test(&self, def: Option<&Def>) -> bool {
        let (Some(pre), Some(d)) = (self.pre, def) else {
            return false;
        };
        let count = |t: &str| t.matches("isinstance(").count();
        self.pre_def(d)
            .is_some_and(|old| count(pre.text(old.node)) > count(self.post.text(d.node)))
    }

    /// A try body that is one protocol builtin applied to names alone (`iter(x)`,
    /// `n = len(self.items)`, `operator.index(v)`): nothing else runs in it. The probed
    /// object's text.
    fn protocol_probe(&self, body: Node) -> Option<String> {
        let kids = named_kids(body);
        let [stmt] = kids.as_slice() else {
            return None;
        };
        if stmt.kind() != "expression_statement" {
            return None;
        }
        let mut e = named_kids(*stmt).into_iter().next()?;
        if e.kind() == "assignment" {
            e = e.child_by_field_name("right")?;
        }
        if e.kind() != "call" {
            return None;
        }
        let probe = e
            .child_by_field_name("function")
            .and_then(|f| pysrc::dotted(self.post, f))
            .is_some_and(|f| {
                let (module, name) = f.rsplit_once('.').unwrap_or(("", &f));
                PROBES.contains(&name) && matches!(module, "" | "builtins" | "operator" | "os")
            });
        let args = named_kids(e.child_by_field_name("arguments")?);
        let plain = args
            .iter()
            .all(|x| matches!(x.kind(), "identifier" | "attribute"));
        (probe && plain).then(|| args.first().map(|a| self.post.text(*a).to_string()))?
    }
}

/// Builtins that answer "does this object support the protocol?" by raising.
const PROBES: &[&str] = &[
    "iter",
    "aiter",
    "len",
    "hash",
    "float",
    "int",
    "complex",
    "index",
    "memoryview",
    "reversed",
    "fspath",
];

/// What a protocol builtin raises for an object that does not support it.
const PROBE_ERRORS: &[&str] = &["TypeError", "ValueError", "AttributeError", "OverflowError"];

/// Exceptions that mean the code is wrong, not that an input is: catching one where the
/// code failed hides the failure.
const PROGRAMMING_ERRORS: &[&str] = &[
    "Exception",
    "BaseException",
    "TypeError",
    "AttributeError",
    "NameError",
    "UnboundLocalError",
    "AssertionError",
    "RecursionError",
    "ZeroDivisionError",
    "ArithmeticError",
];

/// Exceptions that report an expected miss (a key, an index, a module, a file), which code
/// may handle by going on.
const LOOKUP_MISSES: &[&str] = &[
    "KeyError",
    "IndexError",
    "LookupError",
    "StopIteration",
    "StopAsyncIteration",
    "ImportError",
    "ModuleNotFoundError",
    "FileNotFoundError",
    "OSError",
    "IOError",
    "GeneratorExit",
];

/// The exception names a def raises itself (`raise ValueError(...)`).
fn raised_types(src: &Source, def: Node) -> BTreeSet<String> {
    descendants(def)
        .into_iter()
        .filter(|n| n.kind() == "raise_statement")
        .filter_map(|r| named_kids(r).into_iter().next())
        .filter_map(|e| {
            let f = if e.kind() == "call" {
                e.child_by_field_name("function")?
            } else {
                e
            };
            let d = pysrc::dotted(src, f)?;
            Some(d.rsplit('.').next().unwrap_or(&d).to_string())
        })
        .collect()
}

/// The constants a function's `return`s answer (`return` alone is `None`).
fn returned_constants(src: &Source, def: Node) -> BTreeSet<Lit> {
    descendants(def)
        .into_iter()
        .filter(|n| n.kind() == "return_statement")
        .filter_map(|r| match named_kids(r).into_iter().next() {
            None => Some(Lit::None),
            Some(v) => constant_value(src, v),
        })
        .collect()
}
