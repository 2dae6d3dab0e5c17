//! Python source as tree-sitter sees it, for the generalisation layers ([`super::signals`],
//! [`super::oracle`]): parsing, walking, the `def`s of a file with their qualified names, and
//! literal values compared by value (`0x10 == 16`, `'a' == "a"`).
//!
//! Error tolerant like [`super::scan`]: a file with a syntax error still yields what parsed.

use std::collections::BTreeSet;

use tree_sitter::{Node, Parser, Tree};

/// Python tokens, roughly: names, numbers, string literals whole, then any other character (an
/// operator a character at a time). What token-level comparisons of two versions of a line
/// use (the verifier's clause check, the candidates' faithfulness and propagation).
pub static TOKEN: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
    regex::Regex::new(r#"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?|"[^"]*"|'[^']*'|\S"#)
        .expect("static regex")
});

/// Whether `text` parses as Python without syntax errors.
pub fn parses_cleanly(text: &str) -> bool {
    Source::parse(text).is_some_and(|s| !s.root().has_error())
}

/// A parsed source text.
pub struct Source {
    pub text: String,
    tree: Tree,
}

impl Source {
    /// `None` only when the grammar cannot be loaded or tree-sitter gives up.
    pub fn parse(text: &str) -> Option<Source> {
        let mut p = Parser::new();
        p.set_language(&tree_sitter_python::LANGUAGE.into()).ok()?;
        let tree = p.parse(text, None)?;
        Some(Source {
            text: text.to_string(),
            tree,
        })
    }

    pub fn root(&self) -> Node<'_> {
        self.tree.root_node()
    }

    pub fn text<'s>(&'s self, n: Node) -> &'s str {
        n.utf8_text(self.text.as_bytes()).unwrap_or("")
    }

    /// The module's own top-level `NAME = ...` statements (inside a top-level `if` or `try`
    /// too), each with its target name: constants, sentinels, tables built at import.
    pub fn module_assignments(&self) -> Vec<(Node<'_>, &str)> {
        let mut out = Vec::new();
        let mut stack = vec![self.root()];
        while let Some(n) = stack.pop() {
            for s in named_kids(n) {
                match s.kind() {
                    "expression_statement" => {
                        if let Some(a) = s.named_child(0).filter(|a| a.kind() == "assignment")
                            && let Some(left) = a
                                .child_by_field_name("left")
                                .filter(|l| l.kind() == "identifier")
                        {
                            out.push((s, self.text(left)));
                        }
                    }
                    "if_statement" | "try_statement" | "block" | "else_clause" | "elif_clause"
                    | "except_clause" | "finally_clause" => stack.push(s),
                    _ => {}
                }
            }
        }
        out
    }

    /// Every `def` (functions, methods, nested functions) with its qualified name.
    pub fn defs(&self) -> Vec<Def<'_>> {
        let mut out = Vec::new();
        // (node, qualname prefix, inside a class body directly, inside a def)
        let mut stack = vec![(self.root(), String::new(), false, false)];
        while let Some((n, prefix, in_class, in_def)) = stack.pop() {
            for k in kids(n).into_iter().rev() {
                match k.kind() {
                    "function_definition" => {
                        let name = k
                            .child_by_field_name("name")
                            .map_or("", |x| self.text(x))
                            .to_string();
                        let q = format!("{prefix}{name}");
                        let outer = match k.parent() {
                            Some(p) if p.kind() == "decorated_definition" => p,
                            _ => k,
                        };
                        out.push(Def {
                            qualname: q.clone(),
                            name,
                            node: k,
                            first_line: line(outer),
                            last_line: k.end_position().row + 1,
                            method: in_class,
                            nested: in_def,
                            params: params(self, k),
                        });
                        stack.push((k, format!("{q}.<locals>."), false, true));
                    }
                    "class_definition" => {
                        let name = k.child_by_field_name("name").map_or("", |x| self.text(x));
                        stack.push((k, format!("{prefix}{name}."), true, in_def));
                    }
                    // Defs inside `if`/`try`/`with` blocks belong to the same scope.
                    _ => stack.push((k, prefix.clone(), in_class, in_def)),
                }
            }
        }
        out.sort_by_key(|d| d.first_line);
        out
    }

    /// Every literal in `n`'s subtree (maximal ones: `(1, 2)` once, not also `1` and `2`),
    /// with its 1-based line. Docstrings are not literals a test or a branch uses.
    pub fn literals(&self, n: Node) -> Vec<(Lit, usize)> {
        let mut out = Vec::new();
        let mut stack = vec![n];
        while let Some(x) = stack.pop() {
            if is_docstring(x) {
                continue;
            }
            if let Some(l) = literal(self, x) {
                out.push((l, line(x)));
                continue;
            }
            stack.extend(kids(x));
        }
        out
    }
}

/// One `def`.
pub struct Def<'t> {
    /// `f`, `Class.method`, `f.<locals>.g`.
    pub qualname: String,
    pub name: String,
    pub node: Node<'t>,
    /// First line including decorators, 1-based.
    pub first_line: usize,
    pub last_line: usize,
    /// Defined directly in a class body.
    pub method: bool,
    /// Defined inside another def.
    pub nested: bool,
    /// Parameter names in order (`self` included, `*args`/`**kw` without stars).
    pub params: Vec<String>,
}

impl Def<'_> {
    pub fn body(&self) -> Option<Node<'_>> {
        self.node.child_by_field_name("body")
    }

    pub fn contains_line(&self, l: usize) -> bool {
        self.first_line <= l && l <= self.last_line
    }
}

fn params(src: &Source, def: Node) -> Vec<String> {
    let Some(ps) = def.child_by_field_name("parameters") else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for p in named_kids(ps) {
        let name = match p.kind() {
            "identifier" => Some(p),
            "default_parameter" | "typed_default_parameter" => p.child_by_field_name("name"),
            "typed_parameter" | "list_splat_pattern" | "dictionary_splat_pattern" => {
                named_kids(p).into_iter().find(|k| {
                    k.kind() == "identifier"
                        || matches!(k.kind(), "list_splat_pattern" | "dictionary_splat_pattern")
                })
            }
            _ => None,
        };
        if let Some(mut n) = name {
            // `*args: int` nests the splat inside the typed parameter.
            while matches!(n.kind(), "list_splat_pattern" | "dictionary_splat_pattern") {
                match named_kids(n).into_iter().next() {
                    Some(k) => n = k,
                    None => break,
                }
            }
            if n.kind() == "identifier" {
                out.push(src.text(n).to_string());
            }
        }
    }
    out
}

/// The pre-patch def a post-patch def is a version of: the one of the same qualified name,
/// the k-th for the k-th (a module that defines a function twice, under `if`/`else` for
/// two Python versions, pairs each version with its own, not both with the first).
pub fn counterpart<'p, 'q>(pre: &'p [Def<'q>], post: &[Def], d: &Def) -> Option<&'p Def<'q>> {
    let k = post
        .iter()
        .filter(|p| p.qualname == d.qualname)
        .position(|p| p.node.id() == d.node.id())?;
    pre.iter().filter(|p| p.qualname == d.qualname).nth(k)
}

pub fn line(n: Node) -> usize {
    n.start_position().row + 1
}

pub fn kids(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

pub fn named_kids(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|k| k.kind() != "comment")
        .collect()
}

/// Every node of `root`'s subtree, pre-order, without recursion (deep nesting must not
/// overflow the stack).
pub fn descendants(root: Node) -> Vec<Node> {
    let mut out = Vec::new();
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        out.push(n);
        let mut k = kids(n);
        k.reverse();
        stack.extend(k);
    }
    out
}

/// The `def`/`class` a `decorated_definition` wraps; any other node as it is.
pub fn undecorated(n: Node) -> Node {
    if n.kind() == "decorated_definition" {
        n.child_by_field_name("definition").unwrap_or(n)
    } else {
        n
    }
}

/// A string expression statement first in a module, class or def body.
pub fn is_docstring(n: Node) -> bool {
    if n.kind() != "expression_statement" {
        return false;
    }
    let only_string = named_kids(n).len() == 1
        && matches!(named_kids(n)[0].kind(), "string" | "concatenated_string");
    let first = n.parent().is_some_and(|p| {
        matches!(p.kind(), "block" | "module")
            && named_kids(p).first().map(|f| f.id()) == Some(n.id())
    });
    only_string && first
}

/// A literal value, compared by value: what a test passes or expects and what a patch may
/// special-case.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Lit {
    None,
    Bool(bool),
    Int(i128),
    /// The value's bits (`1.5` and `1.50` are one literal).
    Float(u64),
    Str(String),
    Bytes(Vec<u8>),
    /// Tuples, lists and sets of literals, in source order.
    Seq(Vec<Lit>),
}

impl Lit {
    /// Values too common to say anything about where they came from: `None`, booleans,
    /// -1, 0, 1, empty strings and collections.
    pub fn is_degenerate(&self) -> bool {
        match self {
            Lit::None | Lit::Bool(_) => true,
            Lit::Int(n) => (-1..=1).contains(n),
            Lit::Float(b) => [0.0f64, 1.0, -1.0].contains(&f64::from_bits(*b)),
            Lit::Str(s) => s.is_empty(),
            Lit::Bytes(b) => b.is_empty(),
            Lit::Seq(xs) => xs.is_empty(),
        }
    }

    /// Python-like text for evidence (`'abc'`, `(1, 2)`), cut at `max` characters.
    pub fn render(&self, max: usize) -> String {
        let s = match self {
            Lit::None => "None".to_string(),
            Lit::Bool(b) => if *b { "True" } else { "False" }.to_string(),
            Lit::Int(n) => n.to_string(),
            Lit::Float(b) => format!("{:?}", f64::from_bits(*b)),
            Lit::Str(s) => format!("{s:?}"),
            Lit::Bytes(b) => format!("b{:?}", String::from_utf8_lossy(b)),
            Lit::Seq(xs) => format!(
                "({})",
                xs.iter()
                    .map(|x| x.render(max))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        };
        crate::sandbox::output::clip_chars(&s, max)
    }

    /// This literal and, for a collection, every literal inside it.
    pub fn flatten(&self) -> Vec<&Lit> {
        let mut out = vec![self];
        if let Lit::Seq(xs) = self {
            for x in xs {
                out.extend(x.flatten());
            }
        }
        out
    }
}

/// The literal value of an expression node, if it is one: numbers (with a unary minus),
/// strings without interpolation (implicit concatenation folded), `None`/`True`/`False`, and
/// tuples, lists and sets of literals.
pub fn literal(src: &Source, n: Node) -> Option<Lit> {
    match n.kind() {
        "none" => Some(Lit::None),
        "true" => Some(Lit::Bool(true)),
        "false" => Some(Lit::Bool(false)),
        "integer" => parse_int(src.text(n)).map(Lit::Int),
        "float" => {
            let t: String = src.text(n).chars().filter(|c| *c != '_').collect();
            t.parse::<f64>().ok().map(|f| Lit::Float(f.to_bits()))
        }
        "unary_operator" => {
            let op = n.child_by_field_name("operator")?;
            let arg = literal(src, n.child_by_field_name("argument")?)?;
            match (src.text(op), arg) {
                ("-", Lit::Int(v)) => Some(Lit::Int(-v)),
                ("-", Lit::Float(b)) => Some(Lit::Float((-f64::from_bits(b)).to_bits())),
                ("+", v @ (Lit::Int(_) | Lit::Float(_))) => Some(v),
                _ => None,
            }
        }
        "string" => string_lit(src, n),
        "concatenated_string" => {
            let parts: Option<Vec<Lit>> = named_kids(n)
                .into_iter()
                .map(|k| string_lit(src, k))
                .collect();
            let parts = parts?;
            if parts.iter().all(|p| matches!(p, Lit::Str(_))) {
                Some(Lit::Str(
                    parts
                        .into_iter()
                        .map(|p| match p {
                            Lit::Str(s) => s,
                            _ => String::new(),
                        })
                        .collect(),
                ))
            } else {
                None
            }
        }
        "tuple" | "list" | "set" => {
            let items: Option<Vec<Lit>> =
                named_kids(n).into_iter().map(|k| literal(src, k)).collect();
            items.map(Lit::Seq)
        }
        "parenthesized_expression" => {
            let inner = named_kids(n);
            match inner.as_slice() {
                [one] => literal(src, *one),
                _ => None,
            }
        }
        // Integer arithmetic on literals folds (`1024 ** 2` is 1048576 on both sides).
        "binary_operator" => {
            let l = literal(src, n.child_by_field_name("left")?)?;
            let r = literal(src, n.child_by_field_name("right")?)?;
            let op = src.text(n.child_by_field_name("operator")?);
            match (l, r) {
                (Lit::Int(a), Lit::Int(b)) => match op {
                    "+" => a.checked_add(b),
                    "-" => a.checked_sub(b),
                    "*" => a.checked_mul(b),
                    "//" if b != 0 => Some(a.div_euclid(b)),
                    "%" if b != 0 => Some(a.rem_euclid(b)),
                    "**" => u32::try_from(b).ok().and_then(|e| a.checked_pow(e)),
                    "<<" => u32::try_from(b)
                        .ok()
                        .filter(|e| *e < 64)
                        .and_then(|e| a.checked_shl(e)),
                    _ => None,
                }
                .map(Lit::Int),
                (Lit::Str(a), Lit::Str(b)) if op == "+" => Some(Lit::Str(a + &b)),
                _ => None,
            }
        }
        _ => None,
    }
}

fn parse_int(t: &str) -> Option<i128> {
    let t: String = t.chars().filter(|c| *c != '_').collect();
    let lower = t.to_ascii_lowercase();
    let lower = lower.trim_end_matches('l');
    if let Some(h) = lower.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i128::from_str_radix(o, 8).ok()
    } else if let Some(b) = lower.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()
    } else {
        lower.parse().ok()
    }
}

/// A string or bytes literal without interpolation; escapes are decoded for the common cases.
fn string_lit(src: &Source, n: Node) -> Option<Lit> {
    if n.kind() != "string" {
        return None;
    }
    let mut prefix = String::new();
    let mut body = String::new();
    for k in kids(n) {
        match k.kind() {
            "string_start" => prefix = src.text(k).to_ascii_lowercase(),
            "string_end" => {}
            "interpolation" => return None,
            "string_content" if !prefix.contains('r') => {
                // Escapes are children of the content: decode them, keep the text between.
                let mut at = k.start_byte();
                for e in named_kids(k)
                    .into_iter()
                    .filter(|e| e.kind() == "escape_sequence")
                {
                    body.push_str(src.text.get(at..e.start_byte()).unwrap_or(""));
                    body.push_str(&unescape(src.text(e)));
                    at = e.end_byte();
                }
                body.push_str(src.text.get(at..k.end_byte()).unwrap_or(""));
            }
            "escape_sequence" if !prefix.contains('r') => body.push_str(&unescape(src.text(k))),
            _ => body.push_str(src.text(k)),
        }
    }
    if prefix.contains('b') {
        Some(Lit::Bytes(body.into_bytes()))
    } else {
        Some(Lit::Str(body))
    }
}

fn unescape(e: &str) -> String {
    match e {
        "\\n" => "\n".into(),
        "\\t" => "\t".into(),
        "\\r" => "\r".into(),
        "\\0" => "\0".into(),
        "\\\\" => "\\".into(),
        "\\'" => "'".into(),
        "\\\"" => "\"".into(),
        _ => {
            if let Some(h) = e.strip_prefix("\\x").or_else(|| e.strip_prefix("\\u"))
                && let Some(c) = u32::from_str_radix(h, 16).ok().and_then(char::from_u32)
            {
                return c.to_string();
            }
            e.to_string()
        }
    }
}

/// The dotted name an expression spells (`a`, `a.b.c`), if it is one.
pub fn dotted(src: &Source, n: Node) -> Option<String> {
    match n.kind() {
        "identifier" => Some(src.text(n).to_string()),
        "attribute" => {
            let o = dotted(src, n.child_by_field_name("object")?)?;
            let a = src.text(n.child_by_field_name("attribute")?);
            Some(format!("{o}.{a}"))
        }
        _ => None,
    }
}

/// Identifiers read anywhere in `n` (not attribute names after a dot, not keyword names).
pub fn names_used(src: &Source, n: Node) -> BTreeSet<String> {
    descendants(n)
        .into_iter()
        .filter(|x| x.kind() == "identifier")
        .filter(|x| {
            !x.parent().is_some_and(|p| {
                (p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(*x))
                    || (p.kind() == "keyword_argument" && p.child_by_field_name("name") == Some(*x))
            })
        })
        .map(|x| src.text(x).to_string())
        .collect()
}

/// Local name → the dotted path it was imported as (`np` → `numpy`, `dd` →
/// `collections.defaultdict`, `abc` → `collections.abc` for `from collections import abc`).
/// Relative imports keep their dots (`.utils.raises`).
pub fn imports(src: &Source) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for n in descendants(src.root()) {
        match n.kind() {
            "import_statement" => {
                for k in named_kids(n) {
                    match k.kind() {
                        "dotted_name" => {
                            let full = src.text(k).to_string();
                            let first = full.split('.').next().unwrap_or("").to_string();
                            out.push((first.clone(), first));
                        }
                        "aliased_import" => {
                            if let (Some(name), Some(alias)) = (
                                k.child_by_field_name("name"),
                                k.child_by_field_name("alias"),
                            ) {
                                out.push((src.text(alias).into(), src.text(name).into()));
                            }
                        }
                        _ => {}
                    }
                }
            }
            "import_from_statement" => {
                let Some(module) = n.child_by_field_name("module_name") else {
                    continue;
                };
                let m = src.text(module).to_string();
                let mut c = n.walk();
                let names: Vec<Node> = n.children_by_field_name("name", &mut c).collect();
                let sep = if m.ends_with('.') { "" } else { "." };
                for k in names {
                    match k.kind() {
                        "dotted_name" => {
                            let name = src.text(k).to_string();
                            out.push((name.clone(), format!("{m}{sep}{name}")));
                        }
                        "aliased_import" => {
                            if let (Some(name), Some(alias)) = (
                                k.child_by_field_name("name"),
                                k.child_by_field_name("alias"),
                            ) {
                                out.push((
                                    src.text(alias).into(),
                                    format!("{m}{sep}{}", src.text(name)),
                                ));
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defs_have_qualified_names_lines_and_params() {
        let s = Source::parse(
            "import x\n\n@dec\ndef f(a, b=1, *args, c: int = 2, **kw):\n    def g(): pass\n    return a\n\nclass K:\n    def m(self, o):\n        return o\nif x:\n    def h():\n        pass\n",
        )
        .unwrap();
        let d = s.defs();
        let got: Vec<(&str, usize, usize, bool, bool)> = d
            .iter()
            .map(|d| {
                (
                    d.qualname.as_str(),
                    d.first_line,
                    d.last_line,
                    d.method,
                    d.nested,
                )
            })
            .collect();
        assert_eq!(
            got,
            vec![
                ("f", 3, 6, false, false),
                ("f.<locals>.g", 5, 5, false, true),
                ("K.m", 9, 10, true, false),
                ("h", 12, 13, false, false),
            ]
        );
        assert_eq!(d[0].params, vec!["a", "b", "args", "c", "kw"]);
        assert_eq!(d[2].params, vec!["self", "o"]);
    }

    #[test]
    fn literals_compare_by_value_and_skip_docstrings() {
        let s = Source::parse(
            "def f():\n    \"\"\"doc 'x'\"\"\"\n    return (0x10, 'a' \"b\", -2.50, b'\\x00', [None, True])\n",
        )
        .unwrap();
        let lits: Vec<Lit> = s.literals(s.root()).into_iter().map(|(l, _)| l).collect();
        assert_eq!(
            lits,
            vec![Lit::Seq(vec![
                Lit::Int(16),
                Lit::Str("ab".into()),
                Lit::Float((-2.5f64).to_bits()),
                Lit::Bytes(vec![0]),
                Lit::Seq(vec![Lit::None, Lit::Bool(true)]),
            ])]
        );
        assert!(Lit::Int(1).is_degenerate() && !Lit::Int(2).is_degenerate());
        assert!(Lit::Str(String::new()).is_degenerate());
        assert!(!Lit::Str("a".into()).is_degenerate());
        assert_eq!(lits[0].flatten().len(), 8);
        assert_eq!(Lit::Str("it's".into()).render(20), "\"it's\"");
        let s = Source::parse("x = (1024 ** 2 - 1, 'a' + 'b', 2 ** 200)\n").unwrap();
        let lits: BTreeSet<Lit> = s.literals(s.root()).into_iter().map(|(l, _)| l).collect();
        // An overflow does not fold: its operands are literals of their own.
        let want = [1048575, 2, 200]
            .map(Lit::Int)
            .into_iter()
            .chain([Lit::Str("ab".into())]);
        assert_eq!(lits, want.collect());
        // f-strings are not literals.
        let s = Source::parse("x = f'{a}b'\n").unwrap();
        assert!(s.literals(s.root()).is_empty());
    }

    #[test]
    fn imports_map_local_names_to_paths() {
        let s = Source::parse(
            "import os.path\nimport numpy as np\nfrom collections import abc, defaultdict as dd\nfrom .utils import raises\nfrom . import core\n",
        )
        .unwrap();
        let m: std::collections::BTreeMap<String, String> = imports(&s).into_iter().collect();
        assert_eq!(m["os"], "os");
        assert_eq!(m["np"], "numpy");
        assert_eq!(m["abc"], "collections.abc");
        assert_eq!(m["dd"], "collections.defaultdict");
        assert_eq!(m["raises"], ".utils.raises");
        assert_eq!(m["core"], ".core");
    }
}
