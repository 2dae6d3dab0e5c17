//! The one-shot-iterator rule: a suspect function traverses a parameter twice (a `for` over
//! it and an `extend(v)`, two comprehensions, `sum(v)` then `len(v)`), so a generator or a
//! `range` iterator passed in is empty by the second pass. The candidate materializes it
//! first: `v = list(v)` as the body's first statement (after the docstring). Pure.

use tree_sitter::Node;

use super::Problem;
use super::edits::{FileEdit, RuleEdit};
use super::pydefs::{def_in, py_defs};

/// Calls that traverse their (first) argument.
const CONSUMERS: &[&str] = &[
    "list",
    "tuple",
    "set",
    "frozenset",
    "dict",
    "sorted",
    "sum",
    "min",
    "max",
    "any",
    "all",
    "enumerate",
    "zip",
    "len",
    "extend",
    "update",
    "join",
    "map",
    "filter",
];

/// How often `name` is traversed in `n`: iterated by a `for` or a comprehension, or passed
/// to a [`CONSUMERS`] call, not counting nested functions.
fn traversals(n: Node, src: &[u8], name: &str) -> usize {
    let is_name = |x: Option<Node>| {
        x.is_some_and(|x| x.kind() == "identifier" && x.utf8_text(src).ok() == Some(name))
    };
    let mut count = 0;
    match n.kind() {
        "function_definition" | "lambda" | "class_definition" => return 0,
        "for_statement" | "for_in_clause" if is_name(n.child_by_field_name("right")) => count += 1,
        "call" => {
            let f = n.child_by_field_name("function");
            let callee = f.and_then(|f| match f.kind() {
                "identifier" => f.utf8_text(src).ok(),
                "attribute" => f.child_by_field_name("attribute")?.utf8_text(src).ok(),
                _ => None,
            });
            if callee.is_some_and(|c| CONSUMERS.contains(&c))
                && let Some(args) = n.child_by_field_name("arguments")
            {
                let mut c = args.walk();
                if args.named_children(&mut c).any(|a| is_name(Some(a))) {
                    count += 1;
                }
            }
        }
        _ => {}
    }
    let mut c = n.walk();
    for ch in n.named_children(&mut c) {
        count += traversals(ch, src, name);
    }
    count
}

/// The candidates of the ranked functions (the first `limit`), one per function.
pub(super) fn iterated_twice(problem: &Problem, limit: usize) -> Vec<RuleEdit> {
    let mut out = Vec::new();
    for (r, src) in problem.code_suspects(limit) {
        let Some(tree) = crate::agent::context::parse(src) else {
            continue;
        };
        let b = src.as_bytes();
        let def = def_in(tree.root_node(), r.loc.start, r.loc.end);
        let (Some(def), Some(pd)) = (
            def,
            py_defs(src).into_iter().find(|d| {
                d.def_row + 1 >= r.loc.start
                    && d.def_row < r.loc.end
                    && Some(d.def_row) == def.map(|n| n.start_position().row)
            }),
        ) else {
            continue;
        };
        let (Some(body), Some(first_row)) = (def.child_by_field_name("body"), pd.body_row) else {
            continue;
        };
        let Some(ps) = def.child_by_field_name("parameters") else {
            continue;
        };
        let mut c = ps.walk();
        let names: Vec<String> = ps
            .named_children(&mut c)
            .filter_map(|p| match p.kind() {
                "identifier" => Some(p),
                "default_parameter" | "typed_default_parameter" => p.child_by_field_name("name"),
                "typed_parameter" => p.named_child(0).filter(|n| n.kind() == "identifier"),
                _ => None,
            })
            .filter_map(|n| n.utf8_text(b).ok().map(str::to_string))
            .filter(|n| n != "self" && n != "cls")
            .collect();
        let twice: Vec<String> = names
            .into_iter()
            .filter(|n| traversals(body, b, n) >= 2)
            .collect();
        if twice.is_empty() {
            continue;
        }
        let lines: Vec<&str> = src.split_inclusive('\n').collect();
        let Some(first) = lines.get(first_row) else {
            continue;
        };
        let indent = super::pydefs::indent_of(first);
        let add: String = twice
            .iter()
            .map(|n| format!("{indent}{n} = list({n})\n"))
            .collect();
        let content = format!(
            "{}{add}{}",
            lines[..first_row].concat(),
            lines[first_row..].concat()
        );
        out.push(RuleEdit {
            rule: "iterated_twice",
            what: format!(
                "{}:{} {}: {} traversed twice, materialized first (line {})",
                r.loc.path,
                r.loc.start,
                r.loc.name,
                twice.join(", "),
                first_row + 1
            ),
            edits: vec![FileEdit {
                path: r.loc.path.clone(),
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
        Problem::one_suspect("d.py", "addlist", src, "", func, &[func.0 + 2])
    }

    #[test]
    fn a_parameter_traversed_twice_is_listed_after_the_docstring() {
        let src = "class D:\n    def addlist(self, k, v):\n        \"\"\"Add values.\"\"\"\n        if not v:\n            return\n        for x in v:\n            self.add(k, x)\n        self.values.extend(v)\n";
        let got = iterated_twice(&problem(src, (2, 8)), 8);
        assert_eq!(got.len(), 1, "{got:?}");
        let c = &got[0].edits[0].content;
        assert!(
            c.contains("\"\"\"Add values.\"\"\"\n        v = list(v)\n        if not v:"),
            "{c}"
        );
    }

    #[test]
    fn a_parameter_traversed_once_proposes_nothing() {
        let src = "def total(v, k):\n    s = 0\n    for x in v:\n        s += x\n    return [s for _ in range(k)] + sorted(k)\n";
        let got = iterated_twice(&problem(src, (1, 5)), 8);
        assert!(got.is_empty(), "{got:?}");
        // `k` is traversed by `sorted` alone (range(k) does not traverse it).
    }
}
