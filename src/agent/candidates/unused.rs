//! The unused-parameter rule: a suspect function takes a parameter its body never reads, and
//! calls a function of the repository that takes a parameter of the same name without
//! passing it (`parse_qsl(qs, encoding=…)` calling `unquote(key)` where `unquote` takes
//! `encoding`). The candidate passes it, `name=name`, to every such call in the function.
//! Pure; tree-sitter reads the code.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::Problem;
use super::edits::{FileEdit, RuleEdit};
use super::pydefs::each_suspect_def;

/// Parameter names never counted as unused-by-mistake.
const NOT_PASSED_ON: &[&str] = &["self", "cls", "_"];

/// A function's parameters that can be passed by keyword, in order (`*args`, `**kw` and what
/// follows a bare `/` position are not skipped; their names are).
fn params(def: Node, src: &[u8]) -> Vec<String> {
    let Some(ps) = def.child_by_field_name("parameters") else {
        return Vec::new();
    };
    let mut c = ps.walk();
    ps.named_children(&mut c)
        .filter_map(|p| {
            let name = match p.kind() {
                "identifier" => Some(p),
                "default_parameter" | "typed_default_parameter" => p.child_by_field_name("name"),
                "typed_parameter" => p.named_child(0).filter(|n| n.kind() == "identifier"),
                _ => None,
            }?;
            name.utf8_text(src).ok().map(str::to_string)
        })
        .collect()
}

/// Every function defined in `files`, by name: the union of their parameters (a method and a
/// function of one name count as one: the call site does not say which it reaches).
fn callee_params(files: &BTreeMap<String, String>) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for src in files.values() {
        let Some(tree) = crate::agent::context::parse(src) else {
            continue;
        };
        let mut stack = vec![tree.root_node()];
        while let Some(n) = stack.pop() {
            if n.kind() == "function_definition"
                && let Some(name) = n
                    .child_by_field_name("name")
                    .and_then(|x| x.utf8_text(src.as_bytes()).ok())
            {
                let e = out.entry(name.to_string()).or_default();
                for p in params(n, src.as_bytes()) {
                    if !e.contains(&p) {
                        e.push(p);
                    }
                }
            }
            let mut c = n.walk();
            stack.extend(n.named_children(&mut c));
        }
    }
    out
}

/// Identifiers read in `n` (its docstring and comments are not identifiers).
fn names_in(n: Node, src: &[u8], out: &mut BTreeSet<String>) {
    if n.kind() == "identifier"
        && let Ok(t) = n.utf8_text(src)
    {
        out.insert(t.to_string());
    }
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        // A keyword argument's name is not a read of the parameter (`f(encoding=x)`).
        if n.kind() == "keyword_argument" && Some(ch) == n.child_by_field_name("name") {
            continue;
        }
        names_in(ch, src, out);
    }
}

/// Calls in `n`, not descending into nested functions or classes.
fn calls_in<'t>(n: Node<'t>, out: &mut Vec<Node<'t>>) {
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        match ch.kind() {
            "function_definition" | "class_definition" | "lambda" => {}
            "call" => {
                out.push(ch);
                calls_in(ch, out);
            }
            _ => calls_in(ch, out),
        }
    }
}

/// The called function's own name (`unquote`, `self._reset` → `_reset`).
fn callee_name<'s>(call: Node, src: &'s [u8]) -> Option<&'s str> {
    let f = call.child_by_field_name("function")?;
    let id = match f.kind() {
        "identifier" => f,
        "attribute" => f.child_by_field_name("attribute")?,
        _ => return None,
    };
    id.utf8_text(src).ok()
}

/// The candidates of the ranked functions (the first `limit`), one per function.
pub(super) fn unused_parameters(problem: &Problem, limit: usize) -> Vec<RuleEdit> {
    let mut out = Vec::new();
    let mut known: Option<BTreeMap<String, Vec<String>>> = None;
    each_suspect_def(problem, limit, |r, src, def, body| {
        let b = src.as_bytes();
        let mut read = BTreeSet::new();
        names_in(body, b, &mut read);
        let unused: Vec<String> = params(def, b)
            .into_iter()
            .filter(|p| !read.contains(p) && !NOT_PASSED_ON.contains(&p.as_str()))
            .filter(|p| !p.starts_with('_'))
            .collect();
        if unused.is_empty() {
            return;
        }
        let known = known.get_or_insert_with(|| callee_params(&problem.files));
        let mut calls = Vec::new();
        calls_in(body, &mut calls);
        // (byte of the closing parenthesis, whether arguments precede it, the text to add)
        let mut inserts: Vec<(usize, bool, String)> = Vec::new();
        for call in calls {
            let Some(name) = callee_name(call, b) else {
                continue;
            };
            let Some(takes) = known.get(name) else {
                continue;
            };
            let Some(args) = call.child_by_field_name("arguments") else {
                continue;
            };
            if args.kind() != "argument_list" {
                continue;
            }
            let mut c = args.walk();
            let given: Vec<Node> = args.named_children(&mut c).collect();
            if given.iter().any(|a| {
                matches!(a.kind(), "dictionary_splat" | "list_splat") || a.kind() == "comment"
            }) {
                continue;
            }
            let positional = given
                .iter()
                .filter(|a| a.kind() != "keyword_argument")
                .count();
            let keywords: BTreeSet<&str> = given
                .iter()
                .filter(|a| a.kind() == "keyword_argument")
                .filter_map(|a| a.child_by_field_name("name")?.utf8_text(b).ok())
                .collect();
            // A method's `self` is not at the call site.
            let offset = usize::from(takes.first().is_some_and(|p| p == "self" || p == "cls"));
            let add: Vec<String> = unused
                .iter()
                .filter(|p| !keywords.contains(p.as_str()))
                .filter(|p| {
                    takes
                        .iter()
                        .position(|t| t == *p)
                        .is_some_and(|i| i >= positional + offset)
                })
                .map(|p| format!("{p}={p}"))
                .collect();
            if add.is_empty() {
                continue;
            }
            inserts.push((args.end_byte() - 1, !given.is_empty(), add.join(", ")));
        }
        if inserts.is_empty() {
            return;
        }
        inserts.sort_by_key(|(at, _, _)| std::cmp::Reverse(*at));
        let mut content = src.to_string();
        let mut lines = BTreeSet::new();
        for (at, more, add) in &inserts {
            if !src.is_char_boundary(*at) || &src[*at..*at + 1] != ")" {
                continue;
            }
            let before = src[..*at].trim_end();
            let sep = if *more && !before.ends_with(',') {
                ", "
            } else if *more {
                " "
            } else {
                ""
            };
            content.insert_str(*at, &format!("{sep}{add}"));
            lines.insert(src[..*at].matches('\n').count() + 1);
        }
        if content == src {
            return;
        }
        let at: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        out.push(RuleEdit {
            rule: "unused_parameter",
            what: format!(
                "{}:{} {}: passes {} on to the call(s) on line {}",
                r.loc.path,
                r.loc.start,
                r.loc.name,
                unused.join(", "),
                at.join(", ")
            ),
            edits: vec![FileEdit {
                path: r.loc.path.clone(),
                content,
            }],
        });
    });
    out
}

/// A literal default's value, the way the body would write it out: a plain one-line
/// string's text between its quotes (`' '` and `" "` are one value; an f-string, a prefixed
/// or an empty string is not a value here), or a number other than 0 and 1 (those stand
/// for themselves too often).
fn literal_value(n: Node, src: &[u8]) -> Option<String> {
    let text = n.utf8_text(src).ok()?;
    match n.kind() {
        "string" => {
            let mut c = n.walk();
            if n.named_children(&mut c)
                .any(|ch| ch.kind() == "interpolation")
            {
                return None;
            }
            let q = text.chars().next()?;
            let triple = text.starts_with(&q.to_string().repeat(3));
            if !matches!(q, '\'' | '"') || triple || text.len() < 2 {
                return None;
            }
            let inner = &text[1..text.len() - 1];
            (!inner.is_empty()).then(|| format!("s{inner}"))
        }
        "integer" | "float" => {
            let v: f64 = text.replace('_', "").parse().ok()?;
            (v != 0.0 && v != 1.0).then(|| format!("n{v}"))
        }
        _ => None,
    }
}

/// Literals in `n` whose value is `value` where the code produces a value: not a
/// docstring or other bare string statement, not a comparison's operand (that tests an
/// input), not a dict key; nested functions and classes are their own scope.
fn literals_of<'t>(n: Node<'t>, src: &[u8], value: &str, out: &mut Vec<Node<'t>>) {
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        if matches!(
            ch.kind(),
            "function_definition" | "class_definition" | "lambda"
        ) {
            continue;
        }
        let bare_or_tested = matches!(n.kind(), "comparison_operator" | "expression_statement");
        let key = n.kind() == "pair" && n.child_by_field_name("key") == Some(ch);
        if !bare_or_tested && !key && literal_value(ch, src).as_deref() == Some(value) {
            out.push(ch);
        } else {
            literals_of(ch, src, value, out);
        }
    }
}

/// The hardcoded-default rule: a suspect function takes a parameter with a literal default
/// (`sep=' '`, `width=80`), never reads it, and writes that literal out where it produces
/// a value (`' '.join(parts)`): the option was added and documented but never wired in.
/// The candidate reads the parameter there instead. One candidate per file over its
/// ranked functions (the first `limit`): an option is often threaded through siblings at
/// once (`args2sh` and `args2cmd` both take `sep`). Where the literal tests an input
/// (`" " in arg`) or is a dict key, it is the input's business, not the option's. Pure.
pub(super) fn hardcoded_defaults(problem: &Problem, limit: usize) -> Vec<RuleEdit> {
    // path → (replacements (start byte, end byte, name), what was done)
    type Found = (Vec<(usize, usize, String)>, Vec<String>);
    let mut by_file: BTreeMap<String, Found> = BTreeMap::new();
    each_suspect_def(problem, limit, |r, src, def, body| {
        let b = src.as_bytes();
        let Some(ps) = def.child_by_field_name("parameters") else {
            return;
        };
        let mut read = BTreeSet::new();
        names_in(body, b, &mut read);
        let mut c = ps.walk();
        for p in ps.named_children(&mut c) {
            if !matches!(p.kind(), "default_parameter" | "typed_default_parameter") {
                continue;
            }
            let name = p
                .child_by_field_name("name")
                .and_then(|n| n.utf8_text(b).ok());
            let value = p
                .child_by_field_name("value")
                .and_then(|v| literal_value(v, b));
            let (Some(name), Some(value)) = (name, value) else {
                continue;
            };
            if read.contains(name) || name.starts_with('_') || NOT_PASSED_ON.contains(&name) {
                continue;
            }
            let mut found = Vec::new();
            literals_of(body, b, &value, &mut found);
            if found.is_empty() {
                continue;
            }
            let rows: Vec<String> = found
                .iter()
                .map(|l| (l.start_position().row + 1).to_string())
                .collect();
            let entry = by_file.entry(r.loc.path.clone()).or_default();
            entry.1.push(format!(
                "{} reads `{name}` on line {}",
                r.loc.name,
                rows.join(", ")
            ));
            entry.0.extend(
                found
                    .iter()
                    .map(|l| (l.start_byte(), l.end_byte(), name.to_string())),
            );
        }
    });
    let mut out = Vec::new();
    for (path, (mut reps, what)) in by_file {
        let Some(src) = problem.files.get(&path) else {
            continue;
        };
        reps.sort();
        reps.dedup_by_key(|r| r.0);
        let mut content = src.clone();
        for (start, end, name) in reps.into_iter().rev() {
            content.replace_range(start..end, &name);
        }
        out.push(RuleEdit {
            rule: "hardcoded_default",
            what: format!("{path}: {}", what.join("; ")),
            edits: vec![FileEdit {
                path: path.clone(),
                content,
            }],
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(src: &str, func: (usize, usize)) -> Problem {
        Problem::one_suspect("u.py", "parse_qsl", src, "", func, &[func.0 + 1])
    }

    const SRC: &str = "def unquote(string, encoding='utf-8', errors='replace'):\n    return string\n\n\ndef parse_qsl(qs, keep=True, encoding='utf-8'):\n    \"\"\"Pairs; the encoding decodes them.\"\"\"\n    ret = []\n    for pair in qs.split('&'):\n        key, _, value = pair.partition('=')\n        key = unquote(key.replace('+', ' '))\n        if value:\n            value = unquote(value, 'strict')\n        ret.append((key, value, keep))\n    return ret\n";

    #[test]
    fn an_unused_parameter_is_passed_to_every_call_that_takes_it() {
        let got = unused_parameters(&problem(SRC, (5, 14)), 8);
        assert_eq!(got.len(), 1, "{got:?}");
        let c = &got[0].edits[0].content;
        assert!(
            c.contains("key = unquote(key.replace('+', ' '), encoding=encoding)"),
            "{c}"
        );
        // Passed positionally as `encoding`'s slot? No: 'strict' is the second argument.
        assert!(c.contains("unquote(value, 'strict')"), "{c}");
        assert!(got[0].what.contains("line 10"), "{}", got[0].what);
    }

    #[test]
    fn a_parameter_the_body_reads_or_a_callee_without_it_proposes_nothing() {
        let used = SRC.replace(
            "ret.append((key, value, keep))",
            "ret.append((key, value, keep, encoding))",
        );
        assert!(unused_parameters(&problem(&used, (5, 14)), 8).is_empty());
        let no_callee = SRC.replace(
            "def unquote(string, encoding='utf-8'",
            "def unquote(string, charset='utf-8'",
        );
        assert!(unused_parameters(&problem(&no_callee, (5, 14)), 8).is_empty());
    }

    #[test]
    fn a_method_call_counts_self_and_keeps_what_is_passed_by_keyword() {
        let src = "class P:\n    def dec(self, s, encoding='u'):\n        return s\n\n    def run(self, s, encoding='u'):\n        a = self.dec(s)\n        b = self.dec(s, encoding=encoding)\n        return a + b\n";
        let mut p = problem(src, (5, 8));
        p.ranked[0].loc.name = "P.run".into();
        let got = unused_parameters(&p, 8);
        // `encoding` is read in `run` (line 7 passes it): nothing to add.
        assert!(got.is_empty(), "{got:?}");
        let src = src.replace(
            "        b = self.dec(s, encoding=encoding)\n",
            "        b = self.dec(a)\n",
        );
        let mut p = problem(&src, (5, 8));
        p.ranked[0].loc.name = "P.run".into();
        let got = unused_parameters(&p, 8);
        let c = &got[0].edits[0].content;
        assert!(c.contains("a = self.dec(s, encoding=encoding)"), "{c}");
        assert!(c.contains("b = self.dec(a, encoding=encoding)"), "{c}");
    }

    const SEP: &str = "def args2sh(args, sep=' '):\n    \"\"\"Joined by *sep*.\"\"\"\n    ret = [a.replace(\"'\", '') for a in args]\n    return ' '.join(ret)\n\n\ndef args2cmd(args, sep=' '):\n    result = []\n    for arg in args:\n        if result:\n            result.append(\" \")\n        quote = (\" \" in arg) or {' ': 1}.get(arg)\n        result.append(arg)\n    return ''.join(result)\n";

    fn two_suspects(src: &str, report: &str) -> Problem {
        let mut p = Problem::one_suspect("s.py", "args2sh", src, report, (1, 4), &[4]);
        let mut second = p.ranked[0].clone();
        second.loc.name = "args2cmd".into();
        second.loc.start = 7;
        second.loc.end = 14;
        p.ranked.push(second);
        p
    }

    #[test]
    fn an_unread_parameter_replaces_its_default_where_the_code_writes_it_out() {
        let got = hardcoded_defaults(&two_suspects(SEP, ""), 8);
        assert_eq!(got.len(), 1, "one candidate for the file: {got:?}");
        let c = &got[0].edits[0].content;
        assert!(c.contains("    return sep.join(ret)\n"), "{c}");
        assert!(c.contains("            result.append(sep)\n"), "{c}");
        // The literal that tests the input, a dict key, the docstring and the signature stay.
        assert!(
            c.contains("quote = (\" \" in arg) or {' ': 1}.get(arg)"),
            "{c}"
        );
        assert!(c.contains("def args2sh(args, sep=' '):"), "{c}");
        assert!(c.contains("Joined by *sep*."), "{c}");
        // An empty string is not the option's value.
        assert!(c.contains("return ''.join(result)"), "{c}");
        assert!(
            got[0].what.contains("args2cmd reads `sep` on line 11"),
            "{}",
            got[0].what
        );
    }

    #[test]
    fn a_read_parameter_or_a_default_the_body_never_writes_proposes_nothing() {
        let read = SEP
            .replace("return ' '.join(ret)", "return sep.join(ret)")
            .replace("result.append(\" \")", "result.append(sep)");
        assert!(hardcoded_defaults(&two_suspects(&read, ""), 8).is_empty());
        let other = SEP.replace("sep=' '", "sep='-'");
        assert!(hardcoded_defaults(&two_suspects(&other, ""), 8).is_empty());
        // 0 and 1 stand for themselves: `start=1` with `range(1, n)` is no option.
        let one = "def count(n, start=1):\n    return list(range(1, n))\n";
        let p = Problem::one_suspect("c.py", "count", one, "", (1, 2), &[2]);
        assert!(hardcoded_defaults(&p, 8).is_empty());
        let width = "def wrap(text, width=80):\n    return text[:80]\n";
        let p = Problem::one_suspect("c.py", "wrap", width, "", (1, 2), &[2]);
        let got = hardcoded_defaults(&p, 8);
        assert!(
            got[0].edits[0].content.contains("return text[:width]"),
            "{got:?}"
        );
    }
}
