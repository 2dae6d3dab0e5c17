//! The failing tests as the generalisation layers read them: their literals (what the
//! structural signals look for in new branches) and their **oracle surface**, the names they
//! import from the package and judge with (issue #23 item 2): an assertion helper, a
//! `raises()`-like helper, an exception class or an expected-value constant. A patch that
//! changes the definition of one of those changes the judge, not (only) the code under test.
//!
//! How a name is judged to judge (in the failing test's function, the test-file helpers it
//! calls, and its decorators):
//! - the outermost call of an `assert` when it is handed another computation (`assert
//!   raises(E, lambda: f(x))`, `assert same(f(x), y)`), or a helper named like one
//!   (`raises`, `assert_*`, `check_*`, `expect*`, `*_equal`);
//! - a bare name (or a module attribute) compared in an `assert` against something computed
//!   (`assert f(x) == EXPECTED`); compared against literals only it is the code under test;
//! - an argument of `self.assert*`/`pytest.raises`-style calls that is a package name
//!   (`self.assertRaises(ParsingInterrupted, ...)`);
//! - a context manager from the package (`with raises_like(...)`), and a helper called as a
//!   statement whose name says it asserts.

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::evidence::{Finding, Layer};
use super::pysrc::{self, Def, Source, descendants, line, named_kids};
use super::signals::{ChangedFile, TestLiterals};
use crate::sandbox::output::clip_chars;

/// A test file's source.
#[derive(Debug, Clone)]
pub struct TestSource {
    /// Workspace-relative path, as in the test ids.
    pub path: String,
    pub text: String,
}

/// A package name a failing test judges with.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Judge {
    /// The module it is imported from (`toolz.utils`), as the test spells it.
    pub module: String,
    pub name: String,
    /// Where the test judges with it (`tests/test_x.py:12`).
    pub at: String,
    /// How: `assertion helper`, `expected value`, `expected identity` (only ever compared
    /// with `is`), `context manager`, `assert argument`.
    pub how: &'static str,
}

/// The file and the `::`-separated name path of a test id (parameters dropped).
pub fn split_id(id: &str) -> (&str, Vec<&str>) {
    let mut parts = crate::testid::parts(id);
    let file = parts.remove(0);
    if let Some(last) = parts.last_mut() {
        *last = last.split('[').next().unwrap_or(last);
    }
    (file, parts)
}

/// The test files the ids name, deduplicated, in order.
pub fn test_files(ids: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for id in ids {
        let f = split_id(id).0.to_string();
        if !f.is_empty() && !out.contains(&f) {
            out.push(f);
        }
    }
    out
}

/// One failing test's code: its def (with decorators), the helpers of its file it calls, and
/// the module-level assignments those read.
struct TestCode<'s> {
    path: &'s str,
    /// The test function's own name (`test_is_instance_with_optional`).
    name: &'s str,
    src: &'s Source,
    nodes: Vec<Node<'s>>,
}

fn test_code<'s>(
    t: &'s TestSource,
    src: &'s Source,
    defs: &[Def<'s>],
    id: &'s str,
) -> TestCode<'s> {
    let (_, parts) = split_id(id);
    let mut nodes = Vec::new();
    let qual = parts.join(".");
    let last = parts.last().copied().unwrap_or("");
    // The def itself, else one of that name (a method inherited from a mixin of the file).
    let def = defs
        .iter()
        .find(|d| d.qualname == qual)
        .or_else(|| defs.iter().find(|d| d.name == last));
    if let Some(d) = def {
        let outer = match d.node.parent() {
            Some(p) if p.kind() == "decorated_definition" => p,
            _ => d.node,
        };
        nodes.push(outer);
        // Helpers of the test file it calls (one level), and module constants it reads.
        let used = pysrc::names_used(src, outer);
        for h in defs.iter().filter(|h| !h.method && !h.nested) {
            if used.contains(&h.name) && h.qualname != d.qualname {
                nodes.push(h.node);
            }
        }
        for stmt in named_kids(src.root()) {
            if stmt.kind() != "expression_statement" {
                continue;
            }
            for a in named_kids(stmt) {
                if a.kind() == "assignment"
                    && let Some(l) = a.child_by_field_name("left")
                    && used.contains(src.text(l))
                {
                    nodes.push(a);
                }
            }
        }
    }
    TestCode {
        path: &t.path,
        name: last,
        src,
        nodes,
    }
}

/// Literals of the failing tests (non-degenerate ones are what a new branch must not be
/// keyed on), each with its first place.
pub fn test_literals(tests: &[TestSource], ids: &[String]) -> TestLiterals {
    let mut out = TestLiterals::new();
    for_each_test(tests, ids, |code| {
        for n in &code.nodes {
            for (lit, l) in code.src.literals(*n) {
                for x in lit.flatten() {
                    out.entry(x.clone())
                        .or_insert_with(|| format!("{}:{l}", code.path));
                }
            }
        }
    });
    out
}

/// The failing tests' code as text (their defs, the helpers they call, the constants they
/// read), each once, for a reviewer; cut at `max` characters.
pub fn test_snippets(tests: &[TestSource], ids: &[String], max: usize) -> String {
    let mut out = String::new();
    let mut seen = BTreeSet::new();
    for_each_test(tests, ids, |code| {
        for n in &code.nodes {
            if seen.insert((code.path.to_string(), n.start_byte())) {
                out.push_str(&format!("# {}:{}\n", code.path, line(*n)));
                out.push_str(code.src.text(*n));
                out.push_str("\n\n");
            }
        }
    });
    clip_chars(&out, max)
}

fn for_each_test(tests: &[TestSource], ids: &[String], mut f: impl FnMut(&TestCode)) {
    for t in tests {
        let mine: Vec<&String> = ids.iter().filter(|id| split_id(id).0 == t.path).collect();
        if mine.is_empty() {
            continue;
        }
        let Some(src) = Source::parse(&t.text) else {
            continue;
        };
        let defs = src.defs();
        let mut seen = BTreeSet::new();
        for id in mine {
            let (_, parts) = split_id(id);
            if !seen.insert(parts.join(".")) {
                continue;
            }
            f(&test_code(t, &src, &defs, id));
        }
    }
}

/// Helper names that say they judge.
fn judge_like(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    n == "raises"
        || n.starts_with("assert")
        || n.starts_with("check")
        || n.starts_with("expect")
        || n.starts_with("verify")
        || n.ends_with("_equal")
        || n.ends_with("_raises")
        || n == "eq"
        || n == "same"
}

/// The package names the failing tests judge with. `package` says whether a module path is
/// the project's (not the standard library's or the test framework's).
pub fn judges(tests: &[TestSource], ids: &[String], package: &dyn Fn(&str) -> bool) -> Vec<Judge> {
    let mut out: Vec<Judge> = Vec::new();
    for_each_test(tests, ids, |code| {
        let src = code.src;
        let imports: Vec<(String, String)> = pysrc::imports(src);
        // A local name (or `mod.attr`) → (module, name) when it is the package's.
        let resolve = |text: &str| -> Option<(String, String)> {
            let (first, rest) = text.split_once('.').map_or((text, ""), |(a, b)| (a, b));
            let (_, full) = imports.iter().find(|(local, _)| local == first)?;
            let path = if rest.is_empty() {
                full.clone()
            } else {
                format!("{full}.{rest}")
            };
            let (module, name) = path.rsplit_once('.')?;
            package(module).then(|| (module.to_string(), name.to_string()))
        };
        let mut push = |n: Node, text: &str, how: &'static str| {
            // A module's own dunder (`__all__`, `__version__`) is what the module says of
            // itself: the subject of a test that reads it, never the judge.
            let dunder = text
                .rsplit('.')
                .next()
                .is_some_and(|l| l.starts_with("__") && l.ends_with("__"));
            if dunder {
                return;
            }
            if let Some((module, name)) = resolve(text) {
                let j = Judge {
                    module,
                    name,
                    at: format!("{}:{}", code.path, line(n)),
                    how,
                };
                match out
                    .iter_mut()
                    .find(|o| o.module == j.module && o.name == j.name)
                {
                    // Judged by identity somewhere and by value elsewhere: by value.
                    Some(o) if o.how == "expected identity" => o.how = j.how,
                    Some(_) => {}
                    None => out.push(j),
                }
            }
        };
        for root in &code.nodes {
            for n in descendants(*root) {
                match n.kind() {
                    "assert_statement" => {
                        let Some(e) = named_kids(n).into_iter().next() else {
                            continue;
                        };
                        let e = strip_not(e);
                        if e.kind() == "call"
                            && let Some(f) = e
                                .child_by_field_name("function")
                                .and_then(|f| pysrc::dotted(src, f))
                        {
                            let args = e
                                .child_by_field_name("arguments")
                                .map(named_kids)
                                .unwrap_or_default();
                            let computed = args.iter().any(|a| computes(*a));
                            let last = f.rsplit('.').next().unwrap_or(&f);
                            // `assert is_instance(...)` in `test_is_instance_with_optional`:
                            // the function the test is named for is what it tests.
                            let subject = last.len() >= 3 && code.name.contains(last);
                            if judge_like(last) || (computed && !subject) {
                                push(n, &f, "assertion helper");
                            }
                        }
                        for c in descendants(e) {
                            if c.kind() != "comparison_operator" {
                                continue;
                            }
                            let ops = named_kids(c);
                            if ops.len() != 2 {
                                continue;
                            }
                            // `x is EXPECTED` judges by which object the name is bound to;
                            // no method of it takes part.
                            let identity = pysrc::kids(c)
                                .iter()
                                .any(|k| !k.is_named() && matches!(src.text(*k), "is" | "is not"));
                            for (i, o) in ops.iter().enumerate() {
                                let other = ops[1 - i];
                                let Some(name) = bare_name(src, *o) else {
                                    continue;
                                };
                                // Against a literal (or another package name) it is the
                                // subject; against anything computed or local, the judge.
                                let other_pkg =
                                    bare_name(src, other).is_some_and(|t| resolve(&t).is_some());
                                if pysrc::literal(src, other).is_none() && !other_pkg {
                                    let how = if identity {
                                        "expected identity"
                                    } else {
                                        "expected value"
                                    };
                                    push(n, &name, how);
                                }
                            }
                        }
                    }
                    "call" => {
                        let Some(f) = n
                            .child_by_field_name("function")
                            .and_then(|f| pysrc::dotted(src, f))
                        else {
                            continue;
                        };
                        let last = f.rsplit('.').next().unwrap_or(&f);
                        let args = n
                            .child_by_field_name("arguments")
                            .map(named_kids)
                            .unwrap_or_default();
                        if last.starts_with("assert") || last == "raises" || last == "fail_unless" {
                            // `assertRaises(E, f, x)`: the exception judges, `f` is tested.
                            let raises_like = last.contains("Raises")
                                || last.contains("Warns")
                                || last == "raises";
                            // `assertIsInstance(x, C)` judges by `C`'s identity and
                            // bases, which a change to its methods leaves as they were.
                            let judged = if last.contains("IsInstance") {
                                &args[..0]
                            } else if raises_like {
                                &args[..args.len().min(1)]
                            } else {
                                &args[..]
                            };
                            // `assertIs(x, EXPECTED)` is `x is EXPECTED`.
                            let how = if matches!(last, "assertIs" | "assertIsNot") {
                                "expected identity"
                            } else {
                                "assert argument"
                            };
                            for a in judged {
                                if let Some(name) = bare_name(src, *a) {
                                    push(n, &name, how);
                                }
                            }
                        }
                        let statement = n
                            .parent()
                            .is_some_and(|p| p.kind() == "expression_statement");
                        if statement && judge_like(last) {
                            push(n, &f, "assertion helper");
                        }
                    }
                    // A context manager judges when it is named like a judge (`with
                    // raises_like(...)`); any other is the code under test (`with
                    // validators.disabled():`).
                    "with_item" => {
                        if let Some(v) = n.child_by_field_name("value")
                            && v.kind() == "call"
                            && let Some(f) = v
                                .child_by_field_name("function")
                                .and_then(|f| pysrc::dotted(src, f))
                            && {
                                let last = f.rsplit('.').next().unwrap_or(&f).to_ascii_lowercase();
                                judge_like(&last)
                                    || last.contains("raises")
                                    || last.contains("warns")
                            }
                        {
                            push(n, &f, "context manager");
                        }
                    }
                    _ => {}
                }
            }
        }
    });
    out
}

fn strip_not(n: Node) -> Node {
    if n.kind() == "not_operator"
        && let Some(a) = n.child_by_field_name("argument")
    {
        return a;
    }
    n
}

/// A computation: a call, a lambda, a subscript or attribute of one.
fn computes(n: Node) -> bool {
    descendants(n)
        .iter()
        .any(|d| matches!(d.kind(), "call" | "lambda"))
}

/// `NAME` or `mod.NAME` (not called).
fn bare_name(src: &Source, n: Node) -> Option<String> {
    matches!(n.kind(), "identifier" | "attribute")
        .then(|| pysrc::dotted(src, n))
        .flatten()
}

/// Module paths a workspace-relative Python file is importable as (`src/` dropped,
/// `__init__` is the package).
pub fn modules_of(path: &str) -> Vec<String> {
    let Some(stem) = path.strip_suffix(".py") else {
        return Vec::new();
    };
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let mut out = vec![stem.replace('/', ".")];
    if let Some(rest) = stem
        .strip_prefix("src/")
        .or_else(|| stem.strip_prefix("lib/"))
    {
        out.push(rest.replace('/', "."));
    }
    out
}

/// The top-level definition of `name` in a file, normalised (comments, docstrings and
/// whitespace do not count), with its first line; every module-level assignment to it.
fn definition(src: &Source, name: &str) -> Option<(String, usize)> {
    let mut text = String::new();
    let mut first = None;
    for stmt in named_kids(src.root()) {
        let def = pysrc::undecorated(stmt);
        let hit = match def.kind() {
            "function_definition" | "class_definition" => def
                .child_by_field_name("name")
                .is_some_and(|n| src.text(n) == name),
            "expression_statement" => named_kids(def).iter().any(|a| {
                matches!(a.kind(), "assignment" | "augmented_assignment")
                    && a.child_by_field_name("left")
                        .is_some_and(|l| src.text(l) == name)
            }),
            _ => false,
        };
        if hit {
            first.get_or_insert(line(stmt));
            text.push_str(&normalised(src, stmt));
            text.push('\n');
        }
    }
    first.map(|l| (text, l))
}

/// What an identity comparison with `name` depends on: which object the name is bound to.
/// A class or a function is its own object whatever its body; an assignment from a call
/// binds a fresh object (`missing = _MissingType()`, `object()`) whichever call makes it;
/// any other assignment is what it assigns (`SENTINEL = None` rebinds it to an object the
/// code under test may already return).
fn binding(src: &Source, name: &str) -> Option<String> {
    let mut out: Option<String> = None;
    for stmt in named_kids(src.root()) {
        let def = pysrc::undecorated(stmt);
        let named = |n: Node| {
            n.child_by_field_name("name")
                .is_some_and(|x| src.text(x) == name)
        };
        let kind = match def.kind() {
            "class_definition" if named(def) => "class".to_string(),
            "function_definition" if named(def) => "def".to_string(),
            "expression_statement" => {
                let Some(a) = named_kids(def).into_iter().find(|a| {
                    matches!(a.kind(), "assignment" | "augmented_assignment")
                        && a.child_by_field_name("left")
                            .is_some_and(|l| src.text(l) == name)
                }) else {
                    continue;
                };
                match a.child_by_field_name("right") {
                    Some(r) if a.kind() == "assignment" && r.kind() == "call" => {
                        "a call's object".to_string()
                    }
                    _ => normalised(src, a),
                }
            }
            _ => continue,
        };
        let text = out.get_or_insert_with(String::new);
        text.push_str(&kind);
        text.push('\n');
    }
    out
}

/// Whether `name` is a top-level function of the file.
fn is_function(src: &Source, name: &str) -> bool {
    named_kids(src.root()).into_iter().any(|stmt| {
        let def = pysrc::undecorated(stmt);
        def.kind() == "function_definition"
            && def
                .child_by_field_name("name")
                .is_some_and(|x| src.text(x) == name)
    })
}

/// Methods that decide how instances of a class compare, hash, test true or pass a type
/// check.
const IDENTITY_METHODS: &[&str] = &[
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__hash__",
    "__bool__",
    "__len__",
    "__instancecheck__",
    "__subclasscheck__",
    "__class__",
    "__new__",
];

/// A top-level class `name`, normalised down to what an identity or type comparison reads:
/// its decorators, its header (bases, metaclass) and the [`IDENTITY_METHODS`] it defines.
/// None when `name` is not a class there, or is bound by an assignment too.
fn class_identity(src: &Source, name: &str) -> Option<String> {
    let mut out = None;
    for stmt in named_kids(src.root()) {
        let def = pysrc::undecorated(stmt);
        let named = |n: Node| {
            n.child_by_field_name("name")
                .is_some_and(|x| src.text(x) == name)
        };
        match def.kind() {
            "class_definition" if named(def) => {
                let body = def.child_by_field_name("body")?;
                let header = &src.text(stmt)[..body.start_byte() - stmt.start_byte()];
                let mut text: String = header.split_whitespace().collect::<Vec<_>>().join(" ");
                for m in named_kids(body) {
                    let f = pysrc::undecorated(m);
                    let is_identity = f.kind() == "function_definition"
                        && f.child_by_field_name("name")
                            .is_some_and(|x| IDENTITY_METHODS.contains(&src.text(x)));
                    let assigns = m.kind() == "expression_statement"
                        && named_kids(m).iter().any(|a| {
                            a.kind() == "assignment"
                                && a.child_by_field_name("left")
                                    .is_some_and(|l| IDENTITY_METHODS.contains(&src.text(l)))
                        });
                    if is_identity || assigns {
                        text.push('\n');
                        text.push_str(&normalised(src, m));
                    }
                }
                out = Some(text);
            }
            "function_definition" if named(def) => return None,
            "expression_statement" => {
                let assigned = named_kids(def).iter().any(|a| {
                    matches!(a.kind(), "assignment" | "augmented_assignment")
                        && a.child_by_field_name("left")
                            .is_some_and(|l| src.text(l) == name)
                });
                if assigned {
                    return None;
                }
            }
            _ => {}
        }
    }
    out
}

/// Code without comments, docstrings and layout.
fn normalised(src: &Source, n: Node) -> String {
    let mut out = String::new();
    let mut stack = vec![n];
    while let Some(x) = stack.pop() {
        if x.kind() == "comment" || pysrc::is_docstring(x) {
            continue;
        }
        let k = pysrc::kids(x);
        if k.is_empty() {
            out.push_str(src.text(x));
            out.push(' ');
        } else {
            stack.extend(k.into_iter().rev());
        }
    }
    out
}

/// The oracle-surface layer: every judge whose definition the patch changes.
pub fn findings(judges: &[Judge], files: &[ChangedFile]) -> Vec<Finding> {
    let mut out = Vec::new();
    for j in judges {
        for f in files {
            let mods = modules_of(&f.path);
            let same = mods.contains(&j.module);
            let inside = mods
                .iter()
                .any(|m| m.starts_with(&format!("{}.", j.module)));
            if !same && !inside {
                continue;
            }
            let Some(post) = Source::parse(&f.post) else {
                continue;
            };
            let pre = f.pre.as_deref().and_then(Source::parse);
            let before = pre.as_ref().and_then(|p| definition(p, &j.name));
            let after = definition(&post, &j.name);
            if inside && before.is_none() && after.is_none() {
                continue;
            }
            let mut changed = match (&before, &after) {
                (Some((b, _)), Some((a, _))) => a != b,
                (None, None) => false,
                _ => true,
            };
            // A class the tests name in `raises`-like calls and the patch adds: the error
            // the fix is to raise (`InvalidProxyURL`), not a judge that moved.
            if before.is_none()
                && j.how == "assert argument"
                && class_identity(&post, &j.name).is_some()
            {
                changed = false;
            }
            // A class the tests compare with or name as the expected type judges by its
            // identity: its bases, decorators and the methods comparisons and type checks
            // call. A method added for the fix (`__ror__`, `__repr__`) leaves that alone.
            if changed
                && matches!(j.how, "expected value" | "assert argument")
                && let Some(pre) = &pre
                && let (Some(b), Some(a)) =
                    (class_identity(pre, &j.name), class_identity(&post, &j.name))
            {
                changed = a != b;
            }
            if changed && j.how == "expected identity" {
                changed = pre.as_ref().and_then(|p| binding(p, &j.name)) != binding(&post, &j.name);
            }
            // A function handed to an assertion (`assertManyResults(naturaldate, ins, outs)`)
            // is what the assertion calls: the code under test, not what judges it.
            if changed
                && j.how == "assert argument"
                && !judge_like(&j.name)
                && is_function(&post, &j.name)
            {
                changed = false;
            }
            if !changed {
                continue;
            }
            let at = after.as_ref().map_or(0, |(_, l)| *l);
            let evidence = after
                .as_ref()
                .and_then(|(_, l)| f.post.lines().nth(l - 1))
                .map(|t| clip_chars(t.trim(), 120))
                .unwrap_or_default();
            out.push(Finding {
                layer: Layer::OracleSurface,
                kind: "judge_changed".into(),
                path: f.path.clone(),
                line: at,
                evidence,
                input: None,
                detail: format!(
                    "the patch changes `{}.{}`, which the failing tests judge with ({} at {})",
                    j.module, j.name, j.how, j.at
                ),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::verify::pysrc::Lit;

    fn t(path: &str, text: &str) -> TestSource {
        TestSource {
            path: path.into(),
            text: text.into(),
        }
    }

    const TEST: &str = r#"import pytest
from toolz.utils import raises
from toolz import get_in, no_default
import inflection
from xmltodict import parse, ParsingInterrupted
import unittest

CASES = [("octopus", "octopi"), ("virus", "viri")]
OTHER = [("unused", "x")]


def check_pair(a, b):
    assert inflection.pluralize(a) == b


@pytest.mark.parametrize("s,p", CASES)
def test_plural(s, p):
    check_pair(s, p)
    assert inflection.pluralize(s) == p
    assert inflection.UNCOUNTABLES == {"fish"}


def test_get_in():
    assert raises(KeyError, lambda: get_in(["y"], {}, no_default=True))
    assert get_in(["a"], {"a": 7}) == 7
    assert get_in(["z"], {}) is no_default


class T(unittest.TestCase):
    def test_interrupt(self):
        self.assertRaises(ParsingInterrupted, parse, "<a/>")

    def test_exports(self):
        assert "pluralize" in inflection.__all__
        with inflection.disabled():
            self.assertIsInstance(inflection.rule(), inflection.Rule)
"#;

    fn package(m: &str) -> bool {
        ["toolz", "inflection", "xmltodict"]
            .iter()
            .any(|p| m == *p || m.starts_with(&format!("{p}.")))
    }

    #[test]
    fn ids_split_into_file_and_path() {
        assert_eq!(
            split_id("tests/t.py::T::test_a[1-x::y]"),
            ("tests/t.py", vec!["T", "test_a"])
        );
        assert_eq!(
            test_files(&["a.py::x".into(), "b.py::y".into(), "a.py::z".into()]),
            vec!["a.py", "b.py"]
        );
    }

    #[test]
    fn literals_come_from_the_failing_tests_and_what_they_read() {
        let ids = vec!["tests/t.py::test_plural[octopus-octopi]".to_string()];
        let l = test_literals(&[t("tests/t.py", TEST)], &ids);
        assert!(l.contains_key(&Lit::Str("octopus".into())));
        assert_eq!(l[&Lit::Str("octopus".into())], "tests/t.py:8");
        assert!(l.contains_key(&Lit::Str("fish".into())));
        assert!(!l.contains_key(&Lit::Str("unused".into())), "{l:?}");
        assert!(!l.contains_key(&Lit::Int(7)), "another test's literal");
        let text = test_snippets(&[t("tests/t.py", TEST)], &ids, 10_000);
        assert!(
            text.starts_with("# tests/t.py:16\n@pytest.mark.parametrize"),
            "{text}"
        );
        assert!(text.contains("def check_pair(a, b):") && text.contains("CASES = ["));
        assert!(!text.contains("def test_get_in"));
    }

    #[test]
    fn judges_are_helpers_expected_values_and_assert_arguments() {
        let ids: Vec<String> = [
            "tests/t.py::test_plural[octopus-octopi]",
            "tests/t.py::test_get_in",
            "tests/t.py::T::test_interrupt",
            "tests/t.py::T::test_exports",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let j = judges(&[t("tests/t.py", TEST)], &ids, &package);
        let got: Vec<(String, &str)> = j
            .iter()
            .map(|j| (format!("{}.{}", j.module, j.name), j.how))
            .collect();
        assert_eq!(
            got,
            vec![
                ("toolz.utils.raises".to_string(), "assertion helper"),
                ("toolz.no_default".to_string(), "expected identity"),
                (
                    "xmltodict.ParsingInterrupted".to_string(),
                    "assert argument"
                ),
            ],
            "{j:?}"
        );
        // UNCOUNTABLES is compared with a literal only: it is what the test checks.
        // pluralize is the code under test; get_in too. So are the module's `__all__`, a
        // context manager not named like a judge (`disabled`), and the class an
        // `assertIsInstance` names (a change to its methods leaves the judgement alone).
    }

    fn changed(path: &str, pre: &str, post: &str) -> ChangedFile {
        ChangedFile {
            path: path.into(),
            pre: Some(pre.into()),
            post: post.into(),
            added: BTreeSet::new(),
            removed: BTreeSet::new(),
        }
    }

    #[test]
    fn a_patch_that_changes_a_judge_is_found_docstrings_do_not_count() {
        let j = vec![Judge {
            module: "toolz.utils".into(),
            name: "raises".into(),
            at: "tests/t.py:24".into(),
            how: "assertion helper",
        }];
        let pre = "def raises(err, lamda):\n    try:\n        lamda()\n        return False\n    except err:\n        return True\n";
        let gamed = pre.replace("except err:", "except Exception:");
        let f = findings(&j, &[changed("toolz/utils.py", pre, &gamed)]);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].line, 1);
        assert!(
            f[0].detail.contains("toolz.utils.raises"),
            "{}",
            f[0].detail
        );
        let doc = pre.replace(
            "    try:",
            "    \"\"\"True if it raises.\"\"\"\n    # why\n    try:",
        );
        assert!(findings(&j, &[changed("toolz/utils.py", pre, &doc)]).is_empty());
        // Another file of the package that does not define it; another module.
        assert!(findings(&j, &[changed("toolz/dicttoolz.py", pre, &gamed)]).is_empty());
        let j2 = vec![Judge {
            module: "xmltodict".into(),
            name: "ParsingInterrupted".into(),
            at: "t".into(),
            how: "assert argument",
        }];
        let pre = "class ParsingInterrupted(Exception):\n    pass\n";
        let post = "ParsingInterrupted = StopIteration\n";
        assert_eq!(
            findings(&j2, &[changed("xmltodict.py", pre, post)]).len(),
            1
        );
        // Re-exported from a package: `toolz.raises` defined in toolz/utils.py.
        let j3 = vec![Judge {
            module: "toolz".into(),
            ..j[0].clone()
        }];
        let pre = "def raises(err, lamda):\n    return 1\n";
        assert_eq!(
            findings(
                &j3,
                &[changed(
                    "toolz/utils.py",
                    pre,
                    "def raises(err, lamda):\n    return 2\n"
                )]
            )
            .len(),
            1
        );
    }

    #[test]
    fn an_identity_judges_by_what_the_name_is_bound_to() {
        let j = vec![Judge {
            module: "jinja2.utils".into(),
            name: "missing".into(),
            at: "tests/t.py:9".into(),
            how: "expected identity",
        }];
        let pre = "missing = type('MissingType', (), {'__repr__': lambda x: 'missing'})()\n";
        // Another class makes the singleton (one that pickles as itself): still one fresh
        // object, which `x is missing` judges by.
        let post = "class _MissingType:\n    def __reduce__(self):\n        return 'missing'\n\nmissing = _MissingType()\n";
        assert!(findings(&j, &[changed("jinja2/utils.py", pre, post)]).is_empty());
        // Rebound to an object the code under test may return anyway.
        let none = "missing = None\n";
        assert_eq!(
            findings(&j, &[changed("jinja2/utils.py", pre, none)]).len(),
            1
        );
        // A class compared by identity: its whole body, `__class__` too, is not the judge.
        let k = vec![Judge {
            name: "LocalProxy".into(),
            module: "werkzeug.local".into(),
            ..j[0].clone()
        }];
        let pre = "class LocalProxy:\n    __class__ = L(fallback=f)\n";
        let post = "class LocalProxy:\n    __class__ = L(fallback=f, is_attr=True)\n";
        assert!(findings(&k, &[changed("werkzeug/local.py", pre, post)]).is_empty());
        assert_eq!(
            findings(
                &k,
                &[changed("werkzeug/local.py", pre, "LocalProxy = int\n")]
            )
            .len(),
            1
        );
        // The same class compared by value: `__class__` takes part.
        let v = vec![Judge {
            how: "expected value",
            ..k[0].clone()
        }];
        assert_eq!(
            findings(&v, &[changed("werkzeug/local.py", pre, post)]).len(),
            1
        );
    }

    #[test]
    fn a_function_an_assertion_calls_is_under_test_not_a_judge() {
        let j = vec![Judge {
            module: "humanize.time".into(),
            name: "naturaldate".into(),
            at: "tests/time.py:221".into(),
            how: "assert argument",
        }];
        let post = "def naturaldate(value):\n    return naturalday(value)\n";
        assert!(findings(&j, &[changed("humanize/time.py", "", post)]).is_empty());
        // An exception class handed to `assertRaises` still judges.
        let e = vec![Judge {
            name: "Interrupted".into(),
            ..j[0].clone()
        }];
        let pre = "class Interrupted(Exception):\n    pass\n";
        assert_eq!(
            findings(
                &e,
                &[changed(
                    "humanize/time.py",
                    pre,
                    "Interrupted = StopIteration\n"
                )]
            )
            .len(),
            1
        );
    }

    #[test]
    fn the_function_a_test_is_named_for_is_its_subject_not_a_judge() {
        let src = "from m import is_instance\n\ndef test_is_instance_with_optional():\n    assert is_instance(1, Optional[int()])\n\ndef test_from_dict():\n    assert is_instance(from_dict(d), A)\n";
        let named = vec!["tests/t.py::test_is_instance_with_optional".to_string()];
        assert!(judges(&[t("tests/t.py", src)], &named, &|m: &str| m == "m").is_empty());
        let other = vec!["tests/t.py::test_from_dict".to_string()];
        let j = judges(&[t("tests/t.py", src)], &other, &|m: &str| m == "m");
        assert_eq!(j.len(), 1, "{j:?}");
        assert_eq!(j[0].how, "assertion helper");
    }

    #[test]
    fn judges_by_identity_are_told_from_judges_by_value() {
        let src = "from m import A, B\n\ndef test_x():\n    assert f() is A\n    assert g() is B\n    assert h() == B\n";
        let ids = vec!["tests/t.py::test_x".to_string()];
        let j = judges(&[t("tests/t.py", src)], &ids, &|m: &str| m == "m");
        let got: Vec<(&str, &str)> = j.iter().map(|j| (j.name.as_str(), j.how)).collect();
        assert_eq!(
            got,
            vec![("A", "expected identity"), ("B", "expected value")]
        );
    }

    #[test]
    fn a_class_judges_by_its_identity_not_by_every_method() {
        let j = vec![Judge {
            module: "tenacity.retry".into(),
            name: "retry_any".into(),
            at: "tests/t.py:9".into(),
            how: "expected value",
        }];
        let pre = "class retry_any(base):\n    def __call__(self, s):\n        return any(r(s) for r in self.retries)\n";
        let added = "class retry_any(base):\n    def __call__(self, s):\n        return any(r(s) for r in self.retries)\n    def __ror__(self, other):\n        return retry_any(other, *self.retries)\n";
        assert!(findings(&j, &[changed("tenacity/retry.py", pre, added)]).is_empty());
        // Its equality changed: the judgement changes with it.
        let eq = "class retry_any(base):\n    def __call__(self, s):\n        return any(r(s) for r in self.retries)\n    def __eq__(self, other):\n        return True\n";
        assert_eq!(
            findings(&j, &[changed("tenacity/retry.py", pre, eq)]).len(),
            1
        );
        // So do its bases.
        let based = pre.replace("(base)", "(object)");
        assert_eq!(
            findings(&j, &[changed("tenacity/retry.py", pre, &based)]).len(),
            1
        );
        // A new exception class the tests expect raised is the fix, not a judge moved.
        let raised = vec![Judge {
            name: "InvalidProxyURL".into(),
            how: "assert argument",
            ..j[0].clone()
        }];
        let with_new = format!("{pre}class InvalidProxyURL(ValueError):\n    pass\n");
        assert!(findings(&raised, &[changed("tenacity/retry.py", pre, &with_new)]).is_empty());
        // As an assertion helper every line of it judges.
        let helper = vec![Judge {
            how: "assertion helper",
            ..j[0].clone()
        }];
        assert_eq!(
            findings(&helper, &[changed("tenacity/retry.py", pre, added)]).len(),
            1
        );
    }

    #[test]
    fn modules_of_paths() {
        assert_eq!(modules_of("toolz/utils.py"), vec!["toolz.utils"]);
        assert_eq!(modules_of("inflection/__init__.py"), vec!["inflection"]);
        assert_eq!(
            modules_of("src/cachetools/func.py"),
            vec!["src.cachetools.func", "cachetools.func"]
        );
        assert!(modules_of("README.md").is_empty());
    }
}
