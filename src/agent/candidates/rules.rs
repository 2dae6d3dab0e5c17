//! Rule-based candidates: edits whole classes of bug always take, proposed before the model
//! is asked (no model time), checked like any fill.
//!
//! A small model fills the line of a misspelt name or of a Python 2 idiom wrong or gives it
//! back (`issupserset`, `iteritems` kept), although the fix is mechanical. The rules:
//! - **a name that does not exist**: the report's `AttributeError: … has no attribute 'x'` or
//!   `NameError: name 'x' is not defined` names it; it becomes the nearest name the code
//!   or Python's builtin types have (what CPython's "Did you mean" computes, which pytest's
//!   report leaves out), everywhere in the suspects' files.
//! - **a parameter the function never reads** that a function of the repository it calls
//!   takes by the same name: passed on (`encoding=encoding`), see [`super::unused`].
//! - **a parameter traversed twice** (a one-shot iterator passed in is empty the second
//!   time): `v = list(v)` first, see [`super::iterated`].
//! - **a parameter with a literal default the function never reads**, while it writes that
//!   literal out (`sep=' '` and `' '.join(…)`): the parameter is read there instead, see
//!   [`super::unused::hardcoded_defaults`].
//! - **a `next(it)` that leaks `StopIteration`** when the report shows one: a default, or in
//!   a generator a `return` where the iterator ends (PEP 479), see [`super::stopiter`].
//! - **Python 2 idioms in a suspect function**: `iteritems`/`itervalues`/`iterkeys` (called or
//!   quoted), the `next` method protocol, `has_key`, `xrange`; and a dict view wrapped in
//!   `list()` on a suspicious line when the report says a view was used as a sequence.
//!
//! Each rule gives one candidate per file (or function); the runner checks them first, and a
//! clean pass saves the model draws. Pure.

use std::collections::{BTreeMap, BTreeSet};

use super::Problem;
use super::edits::{FileEdit, RuleEdit};
use super::faithful::TOKEN;

/// Ranked functions the idiom rules read at most (they cost no model time, only a check
/// when something matches).
const RULE_FUNCS: usize = 8;

/// Every rule's candidates for `problem`, the report-driven ones first. Pure.
pub fn rule_edits(problem: &Problem) -> Vec<RuleEdit> {
    let mut out = missing_names(problem);
    out.extend(py2_idioms(problem));
    out.extend(super::unused::unused_parameters(problem, RULE_FUNCS));
    out.extend(super::iterated::iterated_twice(problem, RULE_FUNCS));
    out.extend(super::unused::hardcoded_defaults(problem, RULE_FUNCS));
    out.extend(super::stopiter::leaked_stop_iteration(problem, RULE_FUNCS));
    let mut seen = BTreeSet::new();
    out.retain(|r| {
        let key: Vec<(String, String)> = r
            .edits
            .iter()
            .map(|e| (e.path.clone(), e.content.clone()))
            .collect();
        seen.insert(key)
    });
    out
}

/// The suspect source files: the ranked functions' files, else the focus's, tests left out.
fn suspect_files(problem: &Problem) -> Vec<&str> {
    let tests: BTreeSet<&str> = problem.tests.iter().map(|t| t.path.as_str()).collect();
    let mut paths: Vec<&str> = problem
        .ranked
        .iter()
        .map(|r| r.loc.path.as_str())
        .chain(problem.context.focus.code.iter().map(|l| l.path.as_str()))
        .filter(|p| !tests.contains(p) && problem.files.contains_key(*p))
        .collect();
    let mut seen = BTreeSet::new();
    paths.retain(|p| seen.insert(*p));
    paths
}

static MISSING_ATTR: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    // Not `'NoneType' object has no attribute`: a None where an object was expected, not
    // a misspelling.
    regex::Regex::new(r"AttributeError: '([A-Za-z_][A-Za-z0-9_.]*)' object has no attribute '([A-Za-z_][A-Za-z0-9_]*)'")
        .expect("static regex")
});
static MISSING_NAME: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"NameError: name '([A-Za-z_][A-Za-z0-9_]*)' is not defined")
        .expect("static regex")
});

/// Methods of Python's builtin types and common builtins: the names a misspelt attribute of a
/// `set`, `dict`, `str` or `list` most likely meant, when the code itself never spells them.
const BUILTIN_NAMES: &[&str] = &[
    "add",
    "append",
    "capitalize",
    "casefold",
    "center",
    "clear",
    "copy",
    "count",
    "decode",
    "difference",
    "difference_update",
    "discard",
    "encode",
    "endswith",
    "expandtabs",
    "extend",
    "find",
    "format",
    "format_map",
    "fromkeys",
    "get",
    "index",
    "insert",
    "intersection",
    "intersection_update",
    "isalnum",
    "isalpha",
    "isdecimal",
    "isdigit",
    "isdisjoint",
    "isidentifier",
    "islower",
    "isnumeric",
    "isspace",
    "issubset",
    "issuperset",
    "istitle",
    "isupper",
    "items",
    "join",
    "keys",
    "ljust",
    "lower",
    "lstrip",
    "partition",
    "pop",
    "popitem",
    "remove",
    "removeprefix",
    "removesuffix",
    "replace",
    "reverse",
    "rfind",
    "rindex",
    "rjust",
    "rpartition",
    "rsplit",
    "rstrip",
    "setdefault",
    "sort",
    "split",
    "splitlines",
    "startswith",
    "strip",
    "swapcase",
    "symmetric_difference",
    "title",
    "translate",
    "union",
    "update",
    "upper",
    "values",
    "zfill",
    "isinstance",
    "issubclass",
    "getattr",
    "setattr",
    "hasattr",
    "enumerate",
    "sorted",
    "reversed",
    "len",
    "str",
    "int",
    "float",
    "bool",
    "list",
    "dict",
    "set",
    "frozenset",
    "tuple",
    "range",
    "min",
    "max",
    "sum",
    "abs",
    "any",
    "all",
    "zip",
    "map",
    "filter",
    "iter",
    "next",
    "repr",
    "type",
    "print",
    "round",
    "divmod",
    "callable",
    "super",
    "object",
    "bytes",
];

/// The name `missing` most likely meant among `names`: the fewest edits away (a swap of two neighbours is one; at most 1 for
/// names up to 5 characters, 2 for longer ones, as CPython's suggestions allow about a third
/// of the name), then the most often used. Pure.
pub(super) fn nearest_name<'a>(missing: &str, names: &BTreeMap<&'a str, usize>) -> Option<&'a str> {
    let limit = if missing.chars().count() <= 5 { 1 } else { 2 };
    names
        .iter()
        .filter(|(n, _)| **n != missing)
        .map(|(n, uses)| {
            (
                strsim::osa_distance(missing, n),
                std::cmp::Reverse(*uses),
                *n,
            )
        })
        .filter(|(d, _, _)| *d <= limit)
        .min()
        .map(|(_, _, n)| n)
}

/// The report's missing attributes and names, each renamed to the nearest existing name in
/// every suspect file that uses it (an attribute only after a `.`). Pure.
fn missing_names(problem: &Problem) -> Vec<RuleEdit> {
    let mut out = Vec::new();
    let files = suspect_files(problem);
    let mut vocab: BTreeMap<&str, usize> = BTreeMap::new();
    for p in &files {
        for t in TOKEN.find_iter(&problem.files[*p]) {
            let t = t.as_str();
            if t.starts_with(|c: char| c.is_alphabetic() || c == '_') {
                *vocab.entry(t).or_default() += 1;
            }
        }
    }
    let mut asked = BTreeSet::new();
    let attrs = MISSING_ATTR
        .captures_iter(&problem.report)
        .filter(|c| &c[1] != "NoneType")
        .map(|c| (c[2].to_string(), true));
    let names = MISSING_NAME
        .captures_iter(&problem.report)
        .map(|c| (c[1].to_string(), false));
    for (missing, attr) in attrs.chain(names) {
        // A name the code defines or assigns somewhere is not misspelt where it is missing
        // (an attribute set on some paths only, an import cycle): no rule for that.
        if !asked.insert(missing.clone()) || defines(problem, &files, &missing) {
            continue;
        }
        let mut known = vocab.clone();
        for b in BUILTIN_NAMES {
            known.entry(b).or_insert(0);
        }
        let Some(meant) = nearest_name(&missing, &known) else {
            continue;
        };
        let (from, to) = if attr {
            (format!(".{missing}"), format!(".{meant}"))
        } else {
            (missing.clone(), meant.to_string())
        };
        for p in &files {
            if let Some((content, n)) = replace_in_code(&problem.files[*p], &from, &to, None) {
                out.push(RuleEdit {
                    rule: "missing_name",
                    what: format!("{p}: `{missing}` does not exist: `{meant}` on {n} line(s)"),
                    edits: vec![FileEdit {
                        path: p.to_string(),
                        content,
                    }],
                });
            }
        }
    }
    out
}

/// Whether a suspect file defines or assigns `name` (`def name`, `class name`, `name =`,
/// `.name =`, `import … name`). Pure.
fn defines(problem: &Problem, files: &[&str], name: &str) -> bool {
    let Ok(re) = regex::Regex::new(&format!(
        r"(?m)^\s*(?:def|class)\s+{name}\b|\b{name}\s*(?::[^=\n]*)?=[^=]|\bimport\b.*\b{name}\b"
    )) else {
        return false;
    };
    files.iter().any(|p| re.is_match(&problem.files[*p]))
}

/// A Python 2 idiom and its Python 3 spelling, as a pattern over one line.
struct Idiom {
    pattern: &'static str,
    replace: &'static str,
}

static IDIOMS: std::sync::LazyLock<Vec<(regex::Regex, &'static str)>> =
    std::sync::LazyLock::new(|| {
        let idioms = [
            Idiom {
                pattern: r"\.iter(items|values|keys)\(\)",
                replace: ".$1()",
            },
            // `getattr(x, 'iteritems', None)`: the feature test of the same protocol.
            Idiom {
                pattern: r#"(['"])iter(items|values|keys)(['"])"#,
                replace: "$1$2$3",
            },
            Idiom {
                pattern: r#"(hasattr|getattr)\(([^,()]+), *(['"])next(['"])"#,
                replace: "$1($2, ${3}__next__$4",
            },
            Idiom {
                pattern: r"\b([A-Za-z_][A-Za-z0-9_.]*)\.next\(\)",
                replace: "next($1)",
            },
            Idiom {
                pattern: r"\b([A-Za-z_][A-Za-z0-9_.]*)\.has_key\(([^()]+)\)",
                replace: "($2 in $1)",
            },
            Idiom {
                pattern: r"\bxrange\(",
                replace: "range(",
            },
        ];
        idioms
            .into_iter()
            .map(|i| {
                (
                    regex::Regex::new(i.pattern).expect("static regex"),
                    i.replace,
                )
            })
            .collect()
    });

/// A dict view where a sequence is wanted, as the report says it (`random.sample` of
/// `d.keys()` on 3.11+, `d.keys()[0]`).
static VIEW_AS_SEQUENCE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(
        r"'dict_(keys|values|items)' object is not subscriptable|Population must be a sequence|'dict_(keys|values|items)' object has no attribute",
    )
    .expect("static regex")
});
static VIEW_CALL: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r"\b([A-Za-z_][A-Za-z0-9_.]*(?:\[[^\[\]]*\])?\.(?:keys|values|items)\(\))")
        .expect("static regex")
});

/// Python 2 idioms in the top ranked functions, one candidate per function. Pure.
fn py2_idioms(problem: &Problem) -> Vec<RuleEdit> {
    let mut out = Vec::new();
    let view_error = VIEW_AS_SEQUENCE.is_match(&problem.report);
    for (r, src) in problem.code_suspects(RULE_FUNCS) {
        let hot: BTreeSet<usize> = r.hot().into_iter().collect();
        let mut changed = Vec::new();
        let mut lines: Vec<String> = src.split_inclusive('\n').map(str::to_string).collect();
        for (i, line) in lines.iter_mut().enumerate() {
            let n = i + 1;
            if n < r.loc.start || n > r.loc.end || line.trim_start().starts_with('#') {
                continue;
            }
            let mut new = line.clone();
            for (re, rep) in IDIOMS.iter() {
                new = re.replace_all(&new, *rep).into_owned();
            }
            if view_error && hot.contains(&n) {
                new = wrap_views(&new);
            }
            if new != *line {
                *line = new;
                changed.push(n);
            }
        }
        if changed.is_empty() {
            continue;
        }
        let at: Vec<String> = changed.iter().map(|n| n.to_string()).collect();
        out.push(RuleEdit {
            rule: "py2_idiom",
            what: format!(
                "{}:{} {}: Python 3 spelling on line {}",
                r.loc.path,
                r.loc.start,
                r.loc.name,
                at.join(", ")
            ),
            edits: vec![FileEdit {
                path: r.loc.path.clone(),
                content: lines.concat(),
            }],
        });
    }
    out
}

/// `line` with each dict view call not already materialized wrapped in `list(…)`. Pure.
fn wrap_views(line: &str) -> String {
    let mut out = String::with_capacity(line.len() + 8);
    let mut last = 0;
    for m in VIEW_CALL.find_iter(line) {
        let before = line[..m.start()].trim_end();
        let wrapped = ["list(", "sorted(", "tuple(", "set("]
            .iter()
            .any(|w| before.ends_with(w));
        out.push_str(&line[last..m.start()]);
        if wrapped || before.ends_with(" in") {
            out.push_str(m.as_str());
        } else {
            out.push_str(&format!("list({})", m.as_str()));
        }
        last = m.end();
    }
    out.push_str(&line[last..]);
    out
}

/// `src` with `from` replaced by `to` at identifier boundaries on every code line (comment
/// lines skipped; `only`: those 1-based lines alone), and how many lines changed; None when
/// none did. Pure.
fn replace_in_code(
    src: &str,
    from: &str,
    to: &str,
    only: Option<&BTreeSet<usize>>,
) -> Option<(String, usize)> {
    let mut n = 0;
    let mut out = String::with_capacity(src.len());
    for (i, line) in src.split_inclusive('\n').enumerate() {
        let skip =
            line.trim_start().starts_with('#') || only.is_some_and(|o| !o.contains(&(i + 1)));
        match (!skip)
            .then(|| super::propagate::replace_bounded(line, from, to))
            .flatten()
        {
            Some(new) => {
                n += 1;
                out.push_str(&new);
            }
            None => out.push_str(line),
        }
    }
    (n > 0).then_some((out, n))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(
        path: &str,
        src: &str,
        report: &str,
        func: (usize, usize),
        hot: &[usize],
    ) -> Problem {
        Problem::one_suspect(path, "f", src, report, func, hot)
    }

    #[test]
    fn a_misspelt_method_becomes_the_builtin_one_everywhere_in_the_file() {
        let src = "class S:\n    def le(self, o):\n        return self.x.issupserset(o)\n    def ge(self, o):\n        # issupserset here is a comment\n        return self.y.issupserset(o)\n";
        let p = problem(
            "pkg/s.py",
            src,
            "E       AttributeError: 'set' object has no attribute 'issupserset'\n",
            (2, 3),
            &[3],
        );
        let got = rule_edits(&p);
        assert_eq!(got.len(), 1, "{got:?}");
        assert_eq!(got[0].rule, "missing_name");
        let c = &got[0].edits[0].content;
        assert_eq!(c.matches(".issuperset(o)").count(), 2, "{c}");
        assert!(
            c.contains("# issupserset here"),
            "comments are left alone: {c}"
        );
    }

    #[test]
    fn an_undefined_name_becomes_the_nearest_one_the_code_uses() {
        let src = "def total(items):\n    count = 0\n    for i in items:\n        count += i\n    return coutn\n";
        let p = problem(
            "m.py",
            src,
            "E   NameError: name 'coutn' is not defined\n",
            (1, 5),
            &[5],
        );
        let got = rule_edits(&p);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].edits[0].content.contains("    return count\n"));
    }

    #[test]
    fn a_missing_name_far_from_every_known_one_proposes_nothing() {
        let src = "def f():\n    return frobnicate()\n";
        let p = problem(
            "m.py",
            src,
            "NameError: name 'frobnicate' is not defined",
            (1, 2),
            &[2],
        );
        assert!(rule_edits(&p).is_empty());
    }

    #[test]
    fn a_none_or_a_name_the_code_assigns_is_not_taken_for_a_misspelling() {
        let src = "def f(m):\n    return m.group(1)\n";
        let none = "E   AttributeError: 'NoneType' object has no attribute 'group'";
        assert!(rule_edits(&problem("m.py", src, none, (1, 2), &[2])).is_empty());
        // `self.totl` is assigned on one path: missing on the other is not a typo.
        let src = "class C:\n    def a(self):\n        self.totl = 1\n    def b(self):\n        return self.totl + self.total\n";
        let report = "E   AttributeError: 'C' object has no attribute 'totl'";
        assert!(rule_edits(&problem("c.py", src, report, (4, 5), &[5])).is_empty());
    }

    #[test]
    fn nearest_name_allows_one_edit_for_short_names_and_prefers_the_common_one() {
        let names: BTreeMap<&str, usize> = [("keys", 3), ("kays", 1), ("key", 9)].into();
        assert_eq!(nearest_name("kes", &names), Some("key"));
        let names: BTreeMap<&str, usize> = [("item", 1)].into();
        assert_eq!(nearest_name("iten", &names), Some("item"));
        assert_eq!(
            nearest_name("itxx", &names),
            None,
            "two edits are too many for 4 letters"
        );
    }

    #[test]
    fn python2_dict_protocols_are_rewritten_in_the_suspect_function_only() {
        let src = "def update(self, it):\n    if callable(getattr(it, 'iteritems', None)):\n        for k, v in it.iteritems():\n            self[k] = v\n\ndef other(d):\n    return d.iteritems()\n";
        let p = problem("c.py", src, "assert 1 == 2", (1, 4), &[2]);
        let got = rule_edits(&p);
        assert_eq!(got.len(), 1, "{got:?}");
        let c = &got[0].edits[0].content;
        assert!(c.contains("getattr(it, 'items', None)"), "{c}");
        assert!(c.contains("in it.items():"), "{c}");
        assert!(
            c.contains("return d.iteritems()"),
            "outside the function: {c}"
        );
    }

    #[test]
    fn the_next_method_protocol_becomes_the_builtin() {
        let src = "def add(self, rows):\n    if hasattr(rows, 'next'):\n        self.header(rows.next())\n";
        let p = problem("t.py", src, "", (1, 3), &[2]);
        let c = &rule_edits(&p)[0].edits[0].content;
        assert!(c.contains("hasattr(rows, '__next__')"), "{c}");
        assert!(c.contains("self.header(next(rows))"), "{c}");
    }

    #[test]
    fn dict_views_are_listed_on_hot_lines_only_when_the_report_says_so() {
        let src = "def evict(self):\n    for key in random.sample(self._CACHE.keys(), 2):\n        del self._CACHE[key]\n    return sorted(self._CACHE.keys())\n";
        let quiet = problem("j.py", src, "AssertionError", (1, 4), &[2, 4]);
        assert!(rule_edits(&quiet).is_empty());
        let p = problem(
            "j.py",
            src,
            "E   TypeError: Population must be a sequence.  For dicts or sets, use sorted(d).",
            (1, 4),
            &[2, 4],
        );
        let c = &rule_edits(&p)[0].edits[0].content;
        assert!(
            c.contains("random.sample(list(self._CACHE.keys()), 2)"),
            "{c}"
        );
        assert!(
            c.contains("return sorted(self._CACHE.keys())"),
            "already a list: {c}"
        );
    }
}
