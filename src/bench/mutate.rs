//! Bug injection by syntax-tree mutation of Python source.
//!
//! Each [`Mutation`] changes exactly one site and is a byte-range replacement on the original
//! text, so everything around the site (formatting, comments) stays as the author wrote it.
//! Enumeration is deterministic: same source, same mutations in the same order with the same ids.

use std::fmt;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use tree_sitter::{Node, Parser, Tree};

/// The kinds of bug the generator injects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Operator {
    /// `<` ↔ `<=`, `>` ↔ `>=`, `==` ↔ `!=`, `in` ↔ `not in`, `is` ↔ `is not`.
    FlipComparison,
    /// An integer used as an index, slice bound, `range` argument or `+`/`-` operand moved by one.
    OffByOne,
    /// The condition of an `if`/`elif`/`while`/conditional expression negated.
    NegateCondition,
    /// Two adjacent positional arguments of a call swapped.
    SwapArguments,
    /// An `if` without `else` whose body only returns/raises/continues/breaks, replaced by `pass`.
    RemoveGuard,
    /// A literal constant changed (`True` ↔ `False`, integers elsewhere).
    ChangeConstant,
    /// `and` ↔ `or`.
    SwapAndOr,
}

impl Operator {
    pub const ALL: [Operator; 7] = [
        Operator::FlipComparison,
        Operator::OffByOne,
        Operator::NegateCondition,
        Operator::SwapArguments,
        Operator::RemoveGuard,
        Operator::ChangeConstant,
        Operator::SwapAndOr,
    ];

    /// Short slug used in ids.
    pub fn slug(self) -> &'static str {
        match self {
            Operator::FlipComparison => "flipcmp",
            Operator::OffByOne => "offbyone",
            Operator::NegateCondition => "negate",
            Operator::SwapArguments => "swapargs",
            Operator::RemoveGuard => "noguard",
            Operator::ChangeConstant => "const",
            Operator::SwapAndOr => "andor",
        }
    }
}

impl fmt::Display for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.slug())
    }
}

/// One injected bug: replace `source[start..end]` (== `original`) of `file` with `replacement`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Mutation {
    /// Stable id: operator slug plus a hash of file, range and replacement.
    pub id: String,
    /// Repository-relative path with `/` separators.
    pub file: String,
    pub operator: Operator,
    pub start: usize,
    pub end: usize,
    /// 1-based line of the site's start.
    pub line: usize,
    pub original: String,
    pub replacement: String,
}

impl Mutation {
    /// The mutated source. `None` when `source` is not the text the mutation was made from.
    pub fn apply(&self, source: &str) -> Option<String> {
        if source.get(self.start..self.end)? != self.original {
            return None;
        }
        let mut out = String::with_capacity(source.len() + self.replacement.len());
        out.push_str(&source[..self.start]);
        out.push_str(&self.replacement);
        out.push_str(&source[self.end..]);
        Some(out)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum MutateError {
    #[error("the Python grammar could not be loaded into tree-sitter: {0}")]
    Grammar(String),
    #[error("tree-sitter could not parse {0}")]
    Parse(String),
}

fn python_parser() -> Result<Parser, MutateError> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .map_err(|e| MutateError::Grammar(e.to_string()))?;
    Ok(parser)
}

fn parse(source: &str, file: &str) -> Result<Tree, MutateError> {
    python_parser()?
        .parse(source, None)
        .ok_or_else(|| MutateError::Parse(file.to_string()))
}

pub use crate::verify::pysrc::parses_cleanly;

/// Every mutation of one file, in source order. A file with syntax errors yields none (its
/// error regions would make splices unreliable); mutants that do not reparse cleanly are dropped.
pub fn mutations(file: &str, source: &str) -> Result<Vec<Mutation>, MutateError> {
    let tree = parse(source, file)?;
    let root = tree.root_node();
    if root.has_error() {
        return Ok(Vec::new());
    }
    let mut sites = Vec::new();
    let mut cursor = root.walk();
    // Pre-order walk without recursion (deeply nested code must not overflow the stack).
    'walk: loop {
        visit(cursor.node(), source.as_bytes(), &mut sites);
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                continue 'walk;
            }
            if !cursor.goto_parent() {
                break 'walk;
            }
        }
    }
    let mut out: Vec<Mutation> = Vec::new();
    for s in sites {
        let m = make(file, source, s);
        if out.iter().any(|o| o.id == m.id) {
            continue;
        }
        if m.apply(source)
            .is_some_and(|mutant| parses_cleanly(&mutant))
        {
            out.push(m);
        }
    }
    out.sort_by(|a, b| {
        (a.start, a.end, a.operator, &a.replacement).cmp(&(
            b.start,
            b.end,
            b.operator,
            &b.replacement,
        ))
    });
    Ok(out)
}

struct Site {
    op: Operator,
    start: usize,
    end: usize,
    line: usize,
    replacement: String,
}

fn make(file: &str, source: &str, s: Site) -> Mutation {
    let mut h = Sha256::new();
    h.update(file.as_bytes());
    h.update([0]);
    h.update(s.start.to_le_bytes());
    h.update(s.end.to_le_bytes());
    h.update(s.op.slug().as_bytes());
    h.update([0]);
    h.update(s.replacement.as_bytes());
    let digest = hex::encode(h.finalize());
    Mutation {
        id: format!("{}-{}", s.op.slug(), &digest[..10]),
        file: file.to_string(),
        operator: s.op,
        start: s.start,
        end: s.end,
        line: s.line,
        original: source[s.start..s.end].to_string(),
        replacement: s.replacement,
    }
}

fn text<'a>(node: Node, src: &'a [u8]) -> &'a str {
    node.utf8_text(src).unwrap_or("")
}

fn site(op: Operator, node: Node, replacement: String) -> Site {
    Site {
        op,
        start: node.start_byte(),
        end: node.end_byte(),
        line: node.start_position().row + 1,
        replacement,
    }
}

fn visit(node: Node, src: &[u8], out: &mut Vec<Site>) {
    match node.kind() {
        "comparison_operator" => {
            let mut c = node.walk();
            for child in node.children(&mut c) {
                if child.is_named() {
                    continue;
                }
                let flipped = match child.kind() {
                    "<" => "<=",
                    "<=" => "<",
                    ">" => ">=",
                    ">=" => ">",
                    "==" => "!=",
                    "!=" => "==",
                    "in" => "not in",
                    "not in" => "in",
                    "is" => "is not",
                    "is not" => "is",
                    _ => continue,
                };
                out.push(site(Operator::FlipComparison, child, flipped.to_string()));
            }
        }
        "boolean_operator" => {
            if let Some(op) = node.child_by_field_name("operator") {
                let swapped = match op.kind() {
                    "and" => "or",
                    "or" => "and",
                    _ => return,
                };
                out.push(site(Operator::SwapAndOr, op, swapped.to_string()));
            }
        }
        "if_statement" | "elif_clause" | "while_statement" => {
            if let Some(cond) = node.child_by_field_name("condition") {
                out.push(negate(cond, src));
            }
            if node.kind() == "if_statement"
                && let Some(s) = remove_guard(node)
            {
                out.push(s);
            }
        }
        "conditional_expression" => {
            // expression 'if' expression 'else' expression: the condition is the 2nd named child.
            if let Some(cond) = node.named_child(1) {
                out.push(negate(cond, src));
            }
        }
        "argument_list" => swap_arguments(node, src, out),
        "integer" => integer(node, src, out),
        "true" => out.push(site(Operator::ChangeConstant, node, "False".into())),
        "false" => out.push(site(Operator::ChangeConstant, node, "True".into())),
        _ => {}
    }
}

fn negate(cond: Node, src: &[u8]) -> Site {
    let replacement = if cond.kind() == "not_operator" {
        // `not x` → `x`: drop the negation rather than stacking another.
        cond.child_by_field_name("argument")
            .map(|a| text(a, src).to_string())
            .unwrap_or_default()
    } else {
        let t = text(cond, src);
        let simple = matches!(
            cond.kind(),
            "identifier" | "attribute" | "call" | "subscript" | "parenthesized_expression"
        );
        if simple {
            format!("not {t}")
        } else {
            format!("not ({t})")
        }
    };
    site(Operator::NegateCondition, cond, replacement)
}

/// `if cond: return/raise/continue/break` with no elif/else → `pass`.
fn remove_guard(node: Node) -> Option<Site> {
    if node.child_by_field_name("alternative").is_some() {
        return None;
    }
    let body = node.child_by_field_name("consequence")?;
    let mut c = body.walk();
    let stmts: Vec<Node> = body
        .named_children(&mut c)
        .filter(|n| n.kind() != "comment")
        .collect();
    let [only] = stmts.as_slice() else {
        return None;
    };
    if !matches!(
        only.kind(),
        "return_statement" | "raise_statement" | "continue_statement" | "break_statement"
    ) {
        return None;
    }
    Some(site(Operator::RemoveGuard, node, "pass".to_string()))
}

fn swap_arguments(args: Node, src: &[u8], out: &mut Vec<Site>) {
    let mut c = args.walk();
    let named: Vec<Node> = args
        .named_children(&mut c)
        .filter(|n| n.kind() != "comment")
        .collect();
    // Only plain positional arguments: keywords and splats do not mean anything swapped.
    let positional = named.iter().all(|n| {
        !matches!(
            n.kind(),
            "keyword_argument" | "list_splat" | "dictionary_splat" | "generator_expression"
        )
    });
    if !positional || named.len() < 2 {
        return;
    }
    for pair in named.windows(2) {
        let (a, b) = (pair[0], pair[1]);
        let (ta, tb) = (text(a, src), text(b, src));
        if ta == tb {
            continue;
        }
        let between = std::str::from_utf8(&src[a.end_byte()..b.start_byte()]).unwrap_or(", ");
        out.push(Site {
            op: Operator::SwapArguments,
            start: a.start_byte(),
            end: b.end_byte(),
            line: a.start_position().row + 1,
            replacement: format!("{tb}{between}{ta}"),
        });
    }
}

fn integer(node: Node, src: &[u8], out: &mut Vec<Site>) {
    let t = text(node, src);
    let Ok(value) = t.replace('_', "").parse::<i64>() else {
        return; // hex, octal, long literals: leave alone
    };
    if off_by_one_context(node, src) {
        out.push(site(Operator::OffByOne, node, (value + 1).to_string()));
        if value > 0 {
            out.push(site(Operator::OffByOne, node, (value - 1).to_string()));
        }
    } else {
        let changed = match value {
            0 => 1,
            1 => 0,
            n => n + 1,
        };
        out.push(site(Operator::ChangeConstant, node, changed.to_string()));
    }
}

/// Whether an integer sits where an off-by-one is the natural bug: an index or slice bound,
/// a `range(...)` argument, or an operand of `+`/`-` (also through a unary minus).
fn off_by_one_context(node: Node, src: &[u8]) -> bool {
    let mut n = node;
    if let Some(p) = n.parent()
        && p.kind() == "unary_operator"
    {
        n = p;
    }
    let Some(parent) = n.parent() else {
        return false;
    };
    match parent.kind() {
        "slice" => true,
        "subscript" => parent
            .child_by_field_name("value")
            .is_some_and(|v| v.id() != n.id()),
        "binary_operator" => parent
            .child_by_field_name("operator")
            .is_some_and(|o| matches!(o.kind(), "+" | "-")),
        "argument_list" => parent
            .parent()
            .filter(|call| call.kind() == "call")
            .and_then(|call| call.child_by_field_name("function"))
            .is_some_and(|f| text(f, src) == "range"),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn only(src: &str, op: Operator) -> Vec<Mutation> {
        mutations("m.py", src)
            .unwrap()
            .into_iter()
            .filter(|m| m.operator == op)
            .collect()
    }

    fn mutants(src: &str, op: Operator) -> Vec<String> {
        only(src, op)
            .iter()
            .map(|m| m.apply(src).unwrap())
            .collect()
    }

    #[test]
    fn flips_each_comparison_operator_in_place() {
        let src = "def f(a, b):\n    return a  <  b and a is not None and b not in (1,)  # keep\n";
        let got = mutants(src, Operator::FlipComparison);
        assert_eq!(
            got,
            vec![
                "def f(a, b):\n    return a  <=  b and a is not None and b not in (1,)  # keep\n",
                "def f(a, b):\n    return a  <  b and a is None and b not in (1,)  # keep\n",
                "def f(a, b):\n    return a  <  b and a is not None and b in (1,)  # keep\n",
            ]
        );
    }

    #[test]
    fn swaps_and_or_and_negates_conditions() {
        let src = "if x and y:\n    pass\nelif not z:\n    pass\nwhile n > 0:\n    n -= 1\nv = a if ok else b\n";
        assert_eq!(
            mutants(src, Operator::SwapAndOr),
            vec![
                "if x or y:\n    pass\nelif not z:\n    pass\nwhile n > 0:\n    n -= 1\nv = a if ok else b\n"
            ]
        );
        let neg = mutants(src, Operator::NegateCondition);
        assert_eq!(neg.len(), 4);
        assert!(neg[0].starts_with("if not (x and y):\n"));
        assert!(neg[1].contains("elif z:\n"));
        assert!(neg[2].contains("while not (n > 0):\n"));
        assert!(neg[3].ends_with("v = a if not ok else b\n"));
    }

    #[test]
    fn removes_only_simple_guards() {
        let src = "def f(x):\n    if x is None:\n        return 0  # none\n    if x:\n        y = 1\n    if x > 3:\n        raise ValueError(x)\n    else:\n        pass\n    return x\n";
        let got = mutants(src, Operator::RemoveGuard);
        assert_eq!(
            got,
            vec![
                "def f(x):\n    pass\n    if x:\n        y = 1\n    if x > 3:\n        raise ValueError(x)\n    else:\n        pass\n    return x\n"
            ]
        );
    }

    #[test]
    fn swaps_adjacent_positional_arguments_keeping_spacing() {
        let src = "g(a,  b, c)\nh(x, key=y)\nk(q, q)\n";
        assert_eq!(
            mutants(src, Operator::SwapArguments),
            vec![
                "g(b,  a, c)\nh(x, key=y)\nk(q, q)\n",
                "g(a,  c, b)\nh(x, key=y)\nk(q, q)\n"
            ]
        );
    }

    #[test]
    fn integers_by_context() {
        let src = "x = s[1:n - 1]\nfor i in range(0, 3):\n    pass\nlimit = 10\nflag = True\n";
        let obo = mutants(src, Operator::OffByOne);
        assert!(
            obo.contains(
                &"x = s[2:n - 1]\nfor i in range(0, 3):\n    pass\nlimit = 10\nflag = True\n"
                    .to_string()
            )
        );
        assert!(
            obo.contains(
                &"x = s[0:n - 1]\nfor i in range(0, 3):\n    pass\nlimit = 10\nflag = True\n"
                    .to_string()
            )
        );
        assert!(
            obo.contains(
                &"x = s[1:n - 2]\nfor i in range(0, 3):\n    pass\nlimit = 10\nflag = True\n"
                    .to_string()
            )
        );
        assert!(
            obo.contains(
                &"x = s[1:n - 1]\nfor i in range(0, 4):\n    pass\nlimit = 10\nflag = True\n"
                    .to_string()
            )
        );
        let consts = mutants(src, Operator::ChangeConstant);
        assert_eq!(
            consts,
            vec![
                "x = s[1:n - 1]\nfor i in range(0, 3):\n    pass\nlimit = 11\nflag = True\n",
                "x = s[1:n - 1]\nfor i in range(0, 3):\n    pass\nlimit = 10\nflag = False\n",
            ]
        );
    }

    #[test]
    fn deterministic_ids_and_order() {
        let src = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/minilib/minilib/core.py"
        ))
        .unwrap();
        let a = mutations("minilib/core.py", &src).unwrap();
        let b = mutations("minilib/core.py", &src).unwrap();
        assert_eq!(a, b);
        assert!(a.len() > 20, "fixture yields {} mutations", a.len());
        // every operator is exercised by the fixture
        for op in Operator::ALL {
            assert!(a.iter().any(|m| m.operator == op), "no {op} in fixture");
        }
        // ids are unique and change with the file name
        let mut ids: Vec<&str> = a.iter().map(|m| m.id.as_str()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), a.len());
        let c = mutations("other.py", &src).unwrap();
        assert_ne!(a[0].id, c[0].id);
        // every mutant differs from the original only inside its range and still parses
        for m in &a {
            let mutant = m.apply(&src).unwrap();
            assert_eq!(&mutant[..m.start], &src[..m.start]);
            assert_eq!(&mutant[m.start + m.replacement.len()..], &src[m.end..]);
            assert!(parses_cleanly(&mutant), "{m:?}");
            assert_eq!(src[..m.start].matches('\n').count() + 1, m.line);
        }
    }

    #[test]
    fn apply_refuses_other_source_and_broken_files_yield_nothing() {
        let src = "a = x < y\n";
        let m = &only(src, Operator::FlipComparison)[0];
        assert_eq!(m.apply("a = x > y\n"), None);
        assert_eq!(m.apply(""), None);
        assert!(
            mutations("bad.py", "def f(:\n  return 1 < 2\n")
                .unwrap()
                .is_empty()
        );
    }
}
