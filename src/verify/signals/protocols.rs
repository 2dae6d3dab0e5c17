//! Classes that lie about what they are: protocol methods answering constants, copies that
//! are not copies, ABC registrations without the abstract methods.

use std::collections::{BTreeMap, BTreeSet};

use tree_sitter::Node;

use super::{Ctx, Kind, aliases, resolve};
use crate::verify::evidence::Finding;
use crate::verify::pysrc::{self, Source, descendants, line, named_kids};

/// Whether the class around method `def` assigns an attribute of `self` anywhere (or has
/// `__slots__`).
fn stateful_class(src: &Source, def: Node) -> bool {
    let Some(class) = std::iter::successors(def.parent(), |n| n.parent())
        .find(|n| n.kind() == "class_definition")
    else {
        return true;
    };
    descendants(class).into_iter().any(|n| match n.kind() {
        "assignment" | "augmented_assignment" => n.child_by_field_name("left").is_some_and(|l| {
            (l.kind() == "attribute"
                && l.child_by_field_name("object")
                    .is_some_and(|o| matches!(src.text(o), "self" | "cls")))
                || src.text(l) == "__slots__"
        }),
        _ => false,
    })
}

impl Ctx<'_> {
    /// Protocol methods that answer from constants, comparisons that ignore their operand,
    /// copies that are the object itself.
    pub(super) fn dunders(&self, out: &mut Vec<Finding>) {
        for d in &self.post_defs {
            if !d.method || !self.added(d.node) {
                continue;
            }
            let Some(body) = d.body() else { continue };
            let stmts: Vec<Node> = named_kids(body)
                .into_iter()
                .filter(|s| !pysrc::is_docstring(*s))
                .collect();
            let used = pysrc::names_used(self.post, body);
            let single_return = match stmts.as_slice() {
                [s] if s.kind() == "return_statement" => named_kids(*s).into_iter().next(),
                _ => None,
            };
            let name = d.name.as_str();
            // `raise TypeError(...)` and nothing else: the class refuses the protocol (as
            // `__hash__ = None` does), it does not answer it.
            let refuses = matches!(stmts.as_slice(), [s] if s.kind() == "raise_statement");
            let detail = if refuses {
                None
            } else if BINARY_DUNDERS.contains(&name) || UNARY_DUNDERS.contains(&name) {
                if let Some(c) = single_return.and_then(|v| pysrc::literal(self.post, v)) {
                    Some(format!("`{name}` returns the constant {}", c.render(30)))
                } else if BINARY_DUNDERS.contains(&name)
                    && let Some(other) = d.params.get(1)
                    && !used.contains(other)
                {
                    Some(format!("`{name}` never reads its operand `{other}`"))
                } else if UNARY_DUNDERS.contains(&name)
                    && let Some(me) = d.params.first()
                    && !used.contains(me)
                {
                    Some(format!("`{name}` answers without reading the object"))
                } else {
                    None
                }
            } else if COPIES.contains(&name)
                && let Some(me) = d.params.first()
                && single_return.is_some_and(|v| self.post.text(v) == me)
                // A class that keeps no state of its own (a sentinel, a singleton): a copy of
                // it is itself.
                && stateful_class(self.post, d.node)
            {
                Some(format!("`{name}` returns the object itself, not a copy"))
            } else {
                None
            };
            if let Some(detail) = detail {
                out.push(self.finding(Kind::ConstantDunder, d.node, detail, None));
            }
        }
    }

    /// Copies that are not copies of the class, views posing as copies, result types whose
    /// equality is redefined.
    pub(super) fn type_lies(&self, out: &mut Vec<Finding>) {
        let classes = classes(self.post);
        for d in &self.post_defs {
            if !d.method || !COPIES.contains(&d.name.as_str()) || !self.added(d.node) {
                continue;
            }
            let class = d.qualname.rsplit_once('.').map_or("", |(c, _)| c);
            let bases = classes.get(class).map(|c| c.0.clone()).unwrap_or_default();
            let Some(me) = d.params.first() else { continue };
            for r in descendants(d.node)
                .into_iter()
                .filter(|r| r.kind() == "return_statement" && self.added(*r))
            {
                let Some(v) = named_kids(r).into_iter().next() else {
                    continue;
                };
                if v.kind() != "call" {
                    continue;
                }
                let f = v
                    .child_by_field_name("function")
                    .and_then(|f| pysrc::dotted(self.post, f))
                    .unwrap_or_default();
                let args: Vec<String> = v
                    .child_by_field_name("arguments")
                    .map(named_kids)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|a| self.post.text(a).to_string())
                    .collect();
                let base = f.strip_suffix(".copy").unwrap_or(&f);
                if bases.iter().any(|b| b == base) && args.first() == Some(me) {
                    out.push(self.finding(
                        Kind::TypeLie,
                        r,
                        format!("`{}` returns a plain `{base}`, not a `{class}`", d.qualname),
                        None,
                    ));
                }
            }
        }
        for n in descendants(self.post.root()) {
            if n.kind() == "return_statement"
                && self.added(n)
                && let Some(v) = named_kids(n).into_iter().next()
                && v.kind() == "call"
                && let Some(f) = v
                    .child_by_field_name("function")
                    .and_then(|f| pysrc::dotted(self.post, f))
                && VIEWS.contains(&f.rsplit('.').next().unwrap_or(&f))
            {
                out.push(self.finding(
                    Kind::TypeLie,
                    n,
                    format!("a new `return {f}(...)`: a view over the input, not a copy of it"),
                    None,
                ));
            }
            if n.kind() == "class_definition" && self.f.added.contains(&line(n)) {
                let name = n
                    .child_by_field_name("name")
                    .map_or("", |x| self.post.text(x));
                let Some((bases, defined)) = classes.get(name) else {
                    continue;
                };
                if let Some(b) = bases
                    .iter()
                    .find(|b| VALUE_TYPES.contains(&b.rsplit('.').next().unwrap_or(b)))
                    && (defined.contains("__eq__") || defined.contains("__ne__"))
                {
                    out.push(self.finding(
                        Kind::TypeLie,
                        n,
                        format!("a new subclass of `{b}` redefines its equality"),
                        None,
                    ));
                }
            }
        }
    }

    /// `ABC.register(C)` / `@ABC.register` where `C` lacks the ABC's abstract methods.
    pub(super) fn registrations(&self, out: &mut Vec<Finding>) {
        let aliases = aliases(self.post);
        let classes = classes(self.post);
        for n in descendants(self.post.root()) {
            // (the ABC expression, the registered class's name)
            let (abc, target) = match n.kind() {
                "call" if self.added(n) => {
                    let Some(f) = n.child_by_field_name("function") else {
                        continue;
                    };
                    let Some(path) = pysrc::dotted(self.post, f) else {
                        continue;
                    };
                    let Some(abc) = path.strip_suffix(".register") else {
                        continue;
                    };
                    let args = n
                        .child_by_field_name("arguments")
                        .map(named_kids)
                        .unwrap_or_default();
                    let Some(t) = args.first().and_then(|a| pysrc::dotted(self.post, *a)) else {
                        continue;
                    };
                    (abc.to_string(), t)
                }
                "decorated_definition" => {
                    let Some(def) = n.child_by_field_name("definition") else {
                        continue;
                    };
                    if def.kind() != "class_definition" {
                        continue;
                    }
                    let Some(abc) = named_kids(n)
                        .into_iter()
                        .filter(|k| k.kind() == "decorator" && self.added(*k))
                        .find_map(|k| {
                            let t = self.post.text(k).trim_start_matches('@').trim();
                            t.strip_suffix(".register").map(str::to_string)
                        })
                    else {
                        continue;
                    };
                    let name = def
                        .child_by_field_name("name")
                        .map(|x| self.post.text(x).to_string())
                        .unwrap_or_default();
                    (abc, name)
                }
                _ => continue,
            };
            let required = match required_methods(&resolve(&abc, &aliases)) {
                Some(r) if !r.is_empty() => r,
                _ => continue,
            };
            let Some(have) = class_methods(&target, &classes, 0) else {
                continue;
            };
            let missing: Vec<&str> = required
                .iter()
                .filter(|m| !have.contains(**m))
                .copied()
                .collect();
            if !missing.is_empty() {
                out.push(self.finding(
                    Kind::AbcRegistration,
                    n,
                    format!(
                        "`{target}` is registered as a `{abc}` but lacks {}",
                        missing
                            .iter()
                            .map(|m| format!("`{m}`"))
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                    None,
                ));
            }
        }
    }
}

const BINARY_DUNDERS: &[&str] = &[
    "__eq__",
    "__ne__",
    "__lt__",
    "__le__",
    "__gt__",
    "__ge__",
    "__contains__",
];

const UNARY_DUNDERS: &[&str] = &["__bool__", "__len__", "__hash__", "__iter__", "__nonzero__"];

const COPIES: &[&str] = &["copy", "__copy__", "__deepcopy__", "clone"];

/// Objects that read through to their argument: returned where a copy was due, they change
/// when the input does.
const VIEWS: &[&str] = &["ChainMap", "MappingProxyType", "proxy"];

/// Value types whose equality callers rely on.
const VALUE_TYPES: &[&str] = &[
    "int",
    "float",
    "complex",
    "str",
    "bytes",
    "tuple",
    "frozenset",
    "Decimal",
    "Fraction",
    "date",
    "time",
    "datetime",
    "timedelta",
    "timezone",
];

/// Class name → (its base names, the names its body defines).
type Classes = BTreeMap<String, (Vec<String>, BTreeSet<String>)>;

fn classes(src: &Source) -> Classes {
    let mut out = Classes::new();
    for n in descendants(src.root()) {
        if n.kind() != "class_definition" {
            continue;
        }
        let name = n
            .child_by_field_name("name")
            .map_or("", |x| src.text(x))
            .to_string();
        let bases: Vec<String> = n
            .child_by_field_name("superclasses")
            .map(named_kids)
            .unwrap_or_default()
            .into_iter()
            .filter(|a| a.kind() != "keyword_argument")
            .map(|a| src.text(a).to_string())
            .collect();
        let mut defined = BTreeSet::new();
        if let Some(body) = n.child_by_field_name("body") {
            for s in named_kids(body) {
                let s = pysrc::undecorated(s);
                match s.kind() {
                    "function_definition" => {
                        if let Some(x) = s.child_by_field_name("name") {
                            defined.insert(src.text(x).to_string());
                        }
                    }
                    "expression_statement" => {
                        for a in named_kids(s) {
                            if a.kind() == "assignment"
                                && let Some(l) = a.child_by_field_name("left")
                            {
                                defined.insert(src.text(l).to_string());
                            }
                        }
                    }
                    _ => {}
                }
            }
        }
        out.insert(name, (bases, defined));
    }
    out
}

/// The names a class defines with its bases in the same file; `None` when a base is not in
/// the file (it may define anything).
fn class_methods(name: &str, classes: &Classes, depth: usize) -> Option<BTreeSet<String>> {
    let (bases, defined) = classes.get(name)?;
    if depth > 8 {
        return None;
    }
    let mut all = defined.clone();
    for b in bases {
        if b == "object" {
            continue;
        }
        all.extend(class_methods(b, classes, depth + 1)?);
    }
    Some(all)
}

/// The abstract methods a class must have to be registered as `resolved` (an ABC's path
/// through the file's imports): `collections.abc`'s by table; other ABCs are not known
/// (`None`: not judged).
fn required_methods(resolved: &str) -> Option<Vec<&'static str>> {
    let last = resolved.rsplit('.').next().unwrap_or(resolved);
    let from_abc = resolved.starts_with("collections.abc.")
        || resolved.starts_with("typing.")
        || resolved.starts_with("_collections_abc.");
    if from_abc {
        return Some(
            COLLECTION_ABCS
                .iter()
                .find(|(n, _)| *n == last)
                .map(|(_, m)| m.to_vec())
                .unwrap_or_default(),
        );
    }
    None
}

/// `collections.abc`'s abstract methods per ABC (the mixins are given).
const COLLECTION_ABCS: &[(&str, &[&str])] = &[
    ("Container", &["__contains__"]),
    ("Hashable", &["__hash__"]),
    ("Iterable", &["__iter__"]),
    ("Iterator", &["__next__", "__iter__"]),
    ("Reversible", &["__reversed__", "__iter__"]),
    ("Generator", &["send", "throw"]),
    ("Sized", &["__len__"]),
    ("Callable", &["__call__"]),
    ("Collection", &["__contains__", "__iter__", "__len__"]),
    ("Sequence", &["__getitem__", "__len__"]),
    (
        "MutableSequence",
        &[
            "__getitem__",
            "__setitem__",
            "__delitem__",
            "__len__",
            "insert",
        ],
    ),
    ("ByteString", &["__getitem__", "__len__"]),
    ("Set", &["__contains__", "__iter__", "__len__"]),
    (
        "MutableSet",
        &["__contains__", "__iter__", "__len__", "add", "discard"],
    ),
    ("Mapping", &["__getitem__", "__iter__", "__len__"]),
    (
        "MutableMapping",
        &[
            "__getitem__",
            "__setitem__",
            "__delitem__",
            "__iter__",
            "__len__",
        ],
    ),
    ("Awaitable", &["__await__"]),
    ("Coroutine", &["send", "throw"]),
    ("AsyncIterable", &["__aiter__"]),
    ("AsyncIterator", &["__anext__"]),
];
