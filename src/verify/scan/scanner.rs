//! The walk over one file's syntax tree: names resolved through imports and assignments,
//! constant strings folded, and each use recorded with its capability.

use std::collections::HashMap;

use tree_sitter::{Node, Parser};

use super::classify::{
    ATTR_KINDS, DEF_KINDS, IDENTITY_ATTRS, MODULE_KINDS, classify_path, string_kind,
};
use super::{Capability, Use};

/// Every capability use in one source text, in source order.
pub fn uses(source: &str) -> Vec<Use> {
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .is_err()
    {
        return vec![Use {
            capability: Capability::Unparsable,
            line: 1,
            detail: "the Python grammar could not be loaded".into(),
        }];
    }
    let Some(tree) = parser.parse(source, None) else {
        return vec![Use {
            capability: Capability::Unparsable,
            line: 1,
            detail: "tree-sitter could not parse the file".into(),
        }];
    };
    let root = tree.root_node();
    let mut s = Scanner {
        src: source.as_bytes(),
        aliases: HashMap::new(),
        out: Vec::new(),
        depth: std::cell::Cell::new(0),
    };
    s.collect_aliases(root);
    s.walk(root);
    if root.has_error() {
        let line = first_error(root).map_or(1, |n| n.start_position().row + 1);
        s.out.push(Use {
            capability: Capability::Unparsable,
            line,
            detail: "syntax error".into(),
        });
    }
    s.out.sort_by_key(|u| u.line);
    s.out
}

fn first_error(root: Node) -> Option<Node> {
    let mut stack = vec![root];
    while let Some(n) = stack.pop() {
        if n.is_error() || n.is_missing() {
            return Some(n);
        }
        let mut c = n.walk();
        let kids: Vec<Node> = n.children(&mut c).collect();
        stack.extend(kids.into_iter().rev());
    }
    None
}

struct Scanner<'a> {
    src: &'a [u8],
    /// Local name -> dotted path it stands for.
    aliases: HashMap<String, String>,
    out: Vec<Use>,
    depth: std::cell::Cell<u32>,
}

fn kids(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.children(&mut c).collect()
}

fn named_kids(n: Node) -> Vec<Node> {
    let mut c = n.walk();
    n.named_children(&mut c)
        .filter(|k| k.kind() != "comment")
        .collect()
}

/// Every node below `root` (pre-order, no recursion: deep nesting must not overflow).
fn all_nodes(root: Node) -> Vec<Node> {
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

const BUILTIN_NAMES: &[&str] = &[
    "__import__",
    "getattr",
    "setattr",
    "delattr",
    "hasattr",
    "exec",
    "eval",
    "compile",
    "__builtins__",
    "__build_class__",
    "globals",
    "vars",
    "object",
    "type",
];

impl<'a> Scanner<'a> {
    fn text(&self, n: Node) -> &'a str {
        n.utf8_text(self.src).unwrap_or("")
    }

    fn push(&mut self, n: Node, capability: Capability, detail: String) {
        self.out.push(Use {
            capability,
            line: n.start_position().row + 1,
            detail,
        });
    }

    /// Imports anywhere in the file and `name = <resolvable>` assignments (scope-insensitive on
    /// purpose: an over-approximation only adds findings), iterated to a fixpoint.
    fn collect_aliases(&mut self, root: Node) {
        let nodes = all_nodes(root);
        for n in &nodes {
            match n.kind() {
                "import_statement" => {
                    for k in named_kids(*n) {
                        match k.kind() {
                            "dotted_name" => {
                                let full = self.text(k).to_string();
                                let first = full.split('.').next().unwrap_or("").to_string();
                                self.aliases.insert(first.clone(), first);
                            }
                            "aliased_import" => {
                                if let (Some(name), Some(alias)) = (
                                    k.child_by_field_name("name"),
                                    k.child_by_field_name("alias"),
                                ) {
                                    self.aliases.insert(
                                        self.text(alias).to_string(),
                                        self.text(name).to_string(),
                                    );
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
                    if module.kind() == "relative_import" {
                        continue;
                    }
                    let m = self.text(module).to_string();
                    let mut c = n.walk();
                    let names: Vec<Node> = n.children_by_field_name("name", &mut c).collect();
                    for k in names {
                        match k.kind() {
                            "dotted_name" => {
                                let name = self.text(k).to_string();
                                self.aliases.insert(name.clone(), format!("{m}.{name}"));
                            }
                            "aliased_import" => {
                                if let (Some(name), Some(alias)) = (
                                    k.child_by_field_name("name"),
                                    k.child_by_field_name("alias"),
                                ) {
                                    self.aliases.insert(
                                        self.text(alias).to_string(),
                                        format!("{m}.{}", self.text(name)),
                                    );
                                }
                            }
                            _ => {}
                        }
                    }
                }
                _ => {}
            }
        }
        // Assignments: `m = sys`, `f = getattr(sys, 'settrace')`, `a, b = sys, gc`, walrus.
        for _ in 0..4 {
            let mut changed = false;
            for n in &nodes {
                let pairs: Vec<(Node, Node)> = match n.kind() {
                    "assignment" => match (
                        n.child_by_field_name("left"),
                        n.child_by_field_name("right"),
                    ) {
                        (Some(l), Some(r)) => {
                            if matches!(l.kind(), "pattern_list" | "tuple_pattern")
                                && matches!(r.kind(), "expression_list" | "tuple")
                            {
                                named_kids(l).into_iter().zip(named_kids(r)).collect()
                            } else {
                                vec![(l, r)]
                            }
                        }
                        _ => Vec::new(),
                    },
                    "named_expression" => {
                        match (
                            n.child_by_field_name("name"),
                            n.child_by_field_name("value"),
                        ) {
                            (Some(l), Some(r)) => vec![(l, r)],
                            _ => Vec::new(),
                        }
                    }
                    _ => Vec::new(),
                };
                for (l, r) in pairs {
                    if l.kind() != "identifier" {
                        continue;
                    }
                    if let Some(p) = self.resolve(r) {
                        let name = self.text(l).to_string();
                        if self.aliases.get(&name) != Some(&p) && !self.aliases.contains_key(&name)
                        {
                            self.aliases.insert(name, p);
                            changed = true;
                        }
                    }
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// A constant string, folded through `+`, implicit concatenation, `%`-free f-strings,
    /// `''.join([...])` and `str(...)`/`.lower()`-style no-ops are not followed.
    fn const_str(&self, n: Node) -> Option<String> {
        self.bounded(|| self.const_str_inner(n))
    }

    /// Recursion is bounded: deeply nested input must not overflow the stack.
    fn bounded<T>(&self, f: impl FnOnce() -> Option<T>) -> Option<T> {
        if self.depth.get() > 64 {
            return None;
        }
        self.depth.set(self.depth.get() + 1);
        let r = f();
        self.depth.set(self.depth.get() - 1);
        r
    }

    fn const_str_inner(&self, n: Node) -> Option<String> {
        match n.kind() {
            "string" => {
                let mut out = String::new();
                for k in kids(n) {
                    match k.kind() {
                        "string_start" | "string_end" => {}
                        "string_content" => out.push_str(self.text(k)),
                        "escape_sequence" => out.push_str(&unescape(self.text(k))),
                        "interpolation" => return None,
                        _ => out.push_str(self.text(k)),
                    }
                }
                Some(out)
            }
            "concatenated_string" => {
                let mut out = String::new();
                for k in named_kids(n) {
                    out.push_str(&self.const_str(k)?);
                }
                Some(out)
            }
            "binary_operator" => {
                let op = n.child_by_field_name("operator")?;
                if self.text(op) != "+" {
                    return None;
                }
                let l = self.const_str(n.child_by_field_name("left")?)?;
                let r = self.const_str(n.child_by_field_name("right")?)?;
                Some(l + &r)
            }
            "parenthesized_expression" => self.const_str(*named_kids(n).first()?),
            "call" => {
                // 'sep'.join([...constants...])
                let f = n.child_by_field_name("function")?;
                if f.kind() != "attribute" {
                    return None;
                }
                let attr = f.child_by_field_name("attribute")?;
                let obj = f.child_by_field_name("object")?;
                let args = named_kids(n.child_by_field_name("arguments")?);
                match self.text(attr) {
                    "join" => {
                        let sep = self.const_str(obj)?;
                        let list = args.first()?;
                        if !matches!(list.kind(), "list" | "tuple") {
                            return None;
                        }
                        let parts: Option<Vec<String>> = named_kids(*list)
                            .into_iter()
                            .map(|k| self.const_str(k))
                            .collect();
                        Some(parts?.join(&sep))
                    }
                    "lower" | "upper" | "strip" => {
                        let s = self.const_str(obj)?;
                        Some(match self.text(attr) {
                            "lower" => s.to_lowercase(),
                            "upper" => s.to_uppercase(),
                            _ => s.trim().to_string(),
                        })
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }

    /// The dotted path an expression stands for, when it can be known statically.
    fn resolve(&self, n: Node) -> Option<String> {
        self.bounded(|| self.resolve_inner(n))
    }

    fn resolve_inner(&self, n: Node) -> Option<String> {
        match n.kind() {
            "identifier" => {
                let t = self.text(n);
                if let Some(p) = self.aliases.get(t) {
                    return Some(p.clone());
                }
                BUILTIN_NAMES.contains(&t).then(|| t.to_string())
            }
            "attribute" => {
                let obj = self.resolve(n.child_by_field_name("object")?)?;
                let attr = self.text(n.child_by_field_name("attribute")?);
                Some(format!("{obj}.{attr}"))
            }
            "parenthesized_expression" => self.resolve(*named_kids(n).first()?),
            "call" => {
                let f = self.resolve(n.child_by_field_name("function")?)?;
                let args = named_kids(n.child_by_field_name("arguments")?);
                let arg = |i: usize| args.get(i).and_then(|a| self.const_str(*a));
                match f.as_str() {
                    "__import__"
                    | "builtins.__import__"
                    | "importlib.import_module"
                    | "importlib.__import__" => arg(0),
                    "getattr" | "builtins.getattr" => {
                        let obj = self.resolve(*args.first()?)?;
                        Some(format!("{obj}.{}", arg(1)?))
                    }
                    "sys.modules.get" | "sys.modules.pop" | "sys.modules.setdefault" => arg(0),
                    "os.getenv" | "os.environ.get" | "os.environ.setdefault" | "os.environ.pop" => {
                        Some(format!("os.environ.{}", arg(0)?))
                    }
                    "vars" | "builtins.vars" => self.resolve(*args.first()?),
                    "globals" => None,
                    _ => None,
                }
            }
            "subscript" => {
                let v = self.resolve(n.child_by_field_name("value")?)?;
                let key = self.const_str(n.child_by_field_name("subscript")?)?;
                if v == "sys.modules" {
                    Some(key)
                } else if v.ends_with(".__dict__") {
                    Some(format!("{}.{key}", v.trim_end_matches(".__dict__")))
                } else {
                    Some(format!("{v}.{key}"))
                }
            }
            _ => None,
        }
    }

    fn walk(&mut self, root: Node) {
        for n in all_nodes(root) {
            self.visit(n);
        }
    }

    fn visit(&mut self, n: Node) {
        match n.kind() {
            "import_statement" | "import_from_statement" => {
                let module = n
                    .child_by_field_name("module_name")
                    .map(|m| self.text(m).to_string());
                if let Some(m) = &module
                    && !m.starts_with('.')
                {
                    if let Some(k) = classify_path(m) {
                        self.push(n, k, format!("import {m}"));
                    }
                    let mut c = n.walk();
                    let names: Vec<Node> = n.children_by_field_name("name", &mut c).collect();
                    for k in names {
                        let name = match k.kind() {
                            "aliased_import" => k
                                .child_by_field_name("name")
                                .map(|x| self.text(x).to_string()),
                            _ => Some(self.text(k).to_string()),
                        };
                        if let Some(name) = name {
                            let full = format!("{m}.{name}");
                            if let Some(cap) = classify_path(&full) {
                                self.push(n, cap, format!("from {m} import {name}"));
                            }
                        }
                    }
                } else if module.is_none() {
                    for k in named_kids(n) {
                        let name = match k.kind() {
                            "aliased_import" => k
                                .child_by_field_name("name")
                                .map(|x| self.text(x).to_string()),
                            "dotted_name" => Some(self.text(k).to_string()),
                            _ => None,
                        };
                        if let Some(name) = name
                            && let Some(cap) = classify_path(&name)
                        {
                            self.push(n, cap, format!("import {name}"));
                        }
                    }
                }
            }
            "identifier" | "attribute" | "call" | "subscript" => {
                // Names inside import statements were judged above.
                if n.parent().is_some_and(|p| {
                    matches!(
                        p.kind(),
                        "dotted_name" | "aliased_import" | "import_statement"
                    )
                }) {
                    return;
                }
                // `re.compile`'s `compile` and `f(compile=1)`'s are names, not the builtin.
                let is_member = n.kind() == "identifier"
                    && n.parent().is_some_and(|p| {
                        (p.kind() == "attribute" && p.child_by_field_name("attribute") == Some(n))
                            || (p.kind() == "keyword_argument"
                                && p.child_by_field_name("name") == Some(n))
                    });
                if !is_member
                    && let Some(p) = self.resolve(n)
                    && let Some(k) = classify_path(&p)
                {
                    self.push(n, k, p.clone());
                }
                if n.kind() == "attribute"
                    && let Some(a) = n.child_by_field_name("attribute")
                {
                    let name = self.text(a);
                    if let Some((_, k)) = ATTR_KINDS.iter().find(|(x, _)| *x == name) {
                        self.push(n, *k, format!(".{name}"));
                    }
                }
                if n.kind() == "call" {
                    self.visit_call(n);
                    if let Some(s) = self.const_str(n)
                        && let Some((k, d)) = string_kind(&s)
                    {
                        self.push(n, k, d);
                    }
                }
                if n.kind() == "attribute" {
                    self.env_use(n);
                }
            }
            "string" | "concatenated_string" | "binary_operator" => {
                // Only maximal constants: `'a' + 'b'` is judged once, as "ab".
                if n.parent().is_some_and(|p| {
                    matches!(p.kind(), "concatenated_string" | "binary_operator")
                        && self.const_str(p).is_some()
                }) {
                    return;
                }
                if let Some(s) = self.const_str(n)
                    && let Some((k, d)) = string_kind(&s)
                {
                    self.push(n, k, d);
                }
            }
            "assignment" | "augmented_assignment" => {
                if let Some(l) = n.child_by_field_name("left") {
                    let targets = if matches!(l.kind(), "pattern_list" | "tuple_pattern") {
                        named_kids(l)
                    } else {
                        vec![l]
                    };
                    for t in targets {
                        self.assigned(n, t);
                    }
                }
            }
            "delete_statement" => {
                for t in named_kids(n) {
                    let ts = if t.kind() == "expression_list" {
                        named_kids(t)
                    } else {
                        vec![t]
                    };
                    for t in ts {
                        self.assigned(n, t);
                    }
                }
            }
            "function_definition" => {
                if let Some(name) = n.child_by_field_name("name") {
                    let name = self.text(name);
                    if let Some((_, k)) = DEF_KINDS.iter().find(|(x, _)| *x == name) {
                        self.push(n, *k, format!("def {name}"));
                    }
                    if name.starts_with("pytest_") {
                        self.push(
                            n,
                            Capability::TestFramework,
                            format!("def {name} (a pytest hook)"),
                        );
                    }
                }
            }
            "class_definition" => {
                if let Some(args) = n.child_by_field_name("superclasses") {
                    for a in named_kids(args) {
                        // `abc.ABCMeta` only enforces abstract methods at instantiation: a
                        // new ABC is an ordinary class (its registrations are judged by the
                        // structural signals, `verify::signals`).
                        if a.kind() == "keyword_argument"
                            && a.child_by_field_name("name")
                                .is_some_and(|k| self.text(k) == "metaclass")
                            && a.child_by_field_name("value")
                                .and_then(|v| self.resolve(v))
                                .is_none_or(|p| p != "abc.ABCMeta")
                        {
                            self.push(n, Capability::ClassHook, "metaclass=".into());
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// An assignment or `del` target: identity-keeping mutation, or a foreign module's attribute.
    fn assigned(&mut self, stmt: Node, t: Node) {
        match t.kind() {
            "attribute" => {
                let Some(a) = t.child_by_field_name("attribute") else {
                    return;
                };
                let attr = self.text(a).to_string();
                if IDENTITY_ATTRS.contains(&attr.as_str()) {
                    self.push(
                        stmt,
                        Capability::IdentityMutation,
                        format!("assignment to {attr}"),
                    );
                }
                if let Some(obj) = t.child_by_field_name("object")
                    && let Some(p) = self.resolve(obj)
                    && foreign(&p)
                {
                    self.push(
                        stmt,
                        Capability::Monkeypatch,
                        format!("assignment to {p}.{attr}"),
                    );
                }
                if attr == "pytest_plugins" {
                    self.push(stmt, Capability::TestFramework, "pytest_plugins".into());
                }
            }
            "identifier" => {
                let name = self.text(t);
                if name == "pytest_plugins" {
                    self.push(stmt, Capability::TestFramework, "pytest_plugins".into());
                }
                if name == "__builtins__" {
                    self.push(
                        stmt,
                        Capability::Builtins,
                        "assignment to __builtins__".into(),
                    );
                }
            }
            "subscript" => {
                if let Some(v) = t.child_by_field_name("value")
                    && let Some(p) = self.resolve(v)
                    && (foreign(&p) || p.ends_with("__dict__"))
                {
                    self.push(
                        stmt,
                        Capability::Monkeypatch,
                        format!("item assignment in {p}"),
                    );
                }
            }
            _ => {}
        }
    }

    fn visit_call(&mut self, n: Node) {
        let Some(f) = n.child_by_field_name("function") else {
            return;
        };
        let Some(fp) = self.resolve(f) else {
            return;
        };
        let args = n
            .child_by_field_name("arguments")
            .map(named_kids)
            .unwrap_or_default();
        let konst = |i: usize| args.get(i).and_then(|a| self.const_str(*a)).is_some();
        match fp.as_str() {
            "__import__"
            | "builtins.__import__"
            | "importlib.import_module"
            | "importlib.__import__"
                if !konst(0) =>
            {
                self.push(
                    n,
                    Capability::DynamicImport,
                    format!("{fp} of a computed name"),
                );
            }
            "getattr" | "setattr" | "delattr" | "hasattr" | "builtins.getattr"
            | "builtins.setattr" | "builtins.delattr" => {
                let target = args.first().and_then(|a| self.resolve(*a));
                if let Some(t) = &target {
                    if !konst(1) && dynamic_sensitive(t) {
                        self.push(
                            n,
                            Capability::DynamicAttribute,
                            format!("{fp} on {t} with a computed name"),
                        );
                    }
                    if fp.ends_with("setattr") || fp.ends_with("delattr") {
                        if foreign(t) {
                            self.push(n, Capability::Monkeypatch, format!("{fp} on {t}"));
                        }
                        if let Some(a) = args.get(1).and_then(|a| self.const_str(*a))
                            && IDENTITY_ATTRS.contains(&a.as_str())
                        {
                            self.push(n, Capability::IdentityMutation, format!("{fp} of {a}"));
                        }
                    }
                } else if (fp.ends_with("setattr") || fp.ends_with("delattr"))
                    && let Some(a) = args.get(1).and_then(|a| self.const_str(*a))
                    && IDENTITY_ATTRS.contains(&a.as_str())
                {
                    self.push(n, Capability::IdentityMutation, format!("{fp} of {a}"));
                }
            }
            "os.getenv" | "os.environ.get" if !konst(0) => {
                self.push(
                    n,
                    Capability::EnvironmentScan,
                    format!("{fp} of a computed name"),
                );
            }
            _ => {}
        }
    }

    /// `os.environ` used other than through one constant key: iteration, copies, `in` tests.
    fn env_use(&mut self, n: Node) {
        let Some(p) = self.resolve(n) else { return };
        if !matches!(p.as_str(), "os.environ" | "os.environb" | "posix.environ") {
            return;
        }
        let Some(parent) = n.parent() else { return };
        let keyed = match parent.kind() {
            "subscript" => parent
                .child_by_field_name("subscript")
                .is_some_and(|s| self.const_str(s).is_some()),
            "attribute" => {
                let method = parent
                    .child_by_field_name("attribute")
                    .map(|a| self.text(a))
                    .unwrap_or("");
                let call = parent.parent().filter(|g| g.kind() == "call");
                matches!(method, "get" | "setdefault" | "pop" | "__getitem__")
                    && call
                        .and_then(|c| c.child_by_field_name("arguments"))
                        .and_then(|a| named_kids(a).first().copied())
                        .is_some_and(|a| self.const_str(a).is_some())
            }
            _ => false,
        };
        if !keyed {
            self.push(n, Capability::EnvironmentScan, format!("{p} as a whole"));
        }
    }
}

/// Modules where a computed attribute name can reach a capability (`getattr(operator, name)`
/// cannot).
fn dynamic_sensitive(path: &str) -> bool {
    let root = path.split('.').next().unwrap_or(path);
    matches!(
        root,
        "sys"
            | "os"
            | "posix"
            | "importlib"
            | "inspect"
            | "types"
            | "threading"
            | "traceback"
            | "weakref"
            | "getattr"
            | "vars"
            | "globals"
            | "__import__"
    ) || MODULE_KINDS.iter().any(|(m, _)| *m == root)
        || classify_path(path).is_some()
}

/// A path rooted at a standard-library or test-machinery module (not the project's own code).
fn foreign(path: &str) -> bool {
    let root = path.split('.').next().unwrap_or(path);
    super::super::policy::KNOWN_MODULES.contains(root)
        || MODULE_KINDS.iter().any(|(m, _)| *m == root)
}

fn unescape(e: &str) -> String {
    match e {
        "\\n" => "\n".into(),
        "\\t" => "\t".into(),
        "\\\\" => "\\".into(),
        "\\'" => "'".into(),
        "\\\"" => "\"".into(),
        _ => {
            if let Some(hex) = e.strip_prefix("\\x")
                && let Ok(v) = u32::from_str_radix(hex, 16)
                && let Some(c) = char::from_u32(v)
            {
                return c.to_string();
            }
            if let Some(hex) = e.strip_prefix("\\u").or_else(|| e.strip_prefix("\\U"))
                && let Ok(v) = u32::from_str_radix(hex, 16)
                && let Some(c) = char::from_u32(v)
            {
                return c.to_string();
            }
            e.to_string()
        }
    }
}
