//! New state that outlives a call and that the changed code writes (memoization excepted).

use std::collections::BTreeSet;

use tree_sitter::Node;

use super::{Ctx, Kind, constant_value};
use crate::verify::evidence::Finding;
use crate::verify::pysrc::{self, Def, Source, descendants, kids, line, named_kids};

impl Ctx<'_> {
    /// New state that outlives a call and that changed code writes: a module- or class-level
    /// container, a module-level name rebound through `global`, a container of an enclosing
    /// function that a nested one (a wrapper) fills. Memoization keyed by one expression,
    /// read before computing, is not state a result depends on.
    pub(super) fn state(&self, out: &mut Vec<Finding>) {
        // (name, the declaration, the def whose nested defs may keep it; None: module/class)
        let mut new_state: Vec<(String, Node, Option<Node>, bool)> = Vec::new();
        for n in descendants(self.post.root()) {
            if n.kind() != "assignment" || !self.f.added.contains(&line(n)) {
                continue;
            }
            let Some(stmt) = n.parent().filter(|p| p.kind() == "expression_statement") else {
                continue;
            };
            let Some(g) = stmt.parent() else { continue };
            let holder = match g.kind() {
                "module" => None,
                "block" => match g.parent() {
                    Some(c) if c.kind() == "class_definition" => None,
                    // In a def, through its `if`/`with`/`try` blocks.
                    _ => {
                        let mut up = g.parent();
                        while let Some(u) = up {
                            if matches!(u.kind(), "function_definition" | "class_definition") {
                                break;
                            }
                            up = u.parent();
                        }
                        match up {
                            Some(d) if d.kind() == "function_definition" => Some(d),
                            _ => continue,
                        }
                    }
                },
                _ => continue,
            };
            let (Some(l), Some(r)) = (
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            ) else {
                continue;
            };
            if l.kind() != "identifier" {
                continue;
            }
            let mutable = is_mutable_container(self.post, r);
            if mutable || holder.is_none() {
                new_state.push((self.post.text(l).to_string(), n, holder, mutable));
            }
        }
        for (name, decl, holder, mutable) in new_state {
            let writers: Vec<&Def> = self
                .post_defs
                .iter()
                .filter(|d| self.changed(d))
                .filter(|d| match holder {
                    None => true,
                    // A def nested in the holder: the container lives across its calls.
                    Some(h) => {
                        d.nested
                            && d.node.id() != h.id()
                            && h.byte_range().contains(&d.node.start_byte())
                    }
                })
                .collect();
            for d in writers {
                let Some(body) = d.body() else { continue };
                let uses = state_uses(self.post, body, &name);
                let rebinds =
                    holder.is_none() && declares(self.post, body, "global_statement", &name);
                let found = if mutable {
                    uses.writes > 0 && !uses.memo
                } else {
                    rebinds
                };
                if !found {
                    continue;
                }
                let what = match holder {
                    None if mutable => "state the patch adds that outlives the call",
                    None => "a module-level name the patch adds and rebinds on each call",
                    Some(_) => "a container of the enclosing function that lives across its calls",
                };
                out.push(self.finding(
                    Kind::ModuleState,
                    decl,
                    format!("`{}` writes `{name}`, {what}", d.qualname),
                    None,
                ));
                break;
            }
        }
    }
}

/// Whether `body` has a `global NAME` (or `nonlocal NAME`) statement.
fn declares(src: &Source, body: Node, kind: &str, name: &str) -> bool {
    descendants(body).into_iter().any(|n| {
        n.kind() == kind
            && named_kids(n)
                .into_iter()
                .any(|k| k.kind() == "identifier" && src.text(k) == name)
    })
}

fn is_mutable_container(src: &Source, n: Node) -> bool {
    match n.kind() {
        "dictionary" | "list" | "set" => true,
        "call" => n
            .child_by_field_name("function")
            .and_then(|f| pysrc::dotted(src, f))
            .is_some_and(|f| {
                let last = f.rsplit('.').next().unwrap_or(&f);
                matches!(
                    last,
                    "dict"
                        | "list"
                        | "set"
                        | "defaultdict"
                        | "OrderedDict"
                        | "Counter"
                        | "deque"
                        | "WeakValueDictionary"
                        | "WeakKeyDictionary"
                )
            }),
        _ => false,
    }
}

/// How a function body uses one piece of state.
struct StateUses {
    writes: usize,
    /// Every use is memoization keyed by one expression: `S[k] = v`, `S[k]`, `S.get(k)`,
    /// `k in S` (plus `len(S)` and `S.clear()` for a bounded memo).
    memo: bool,
}

fn state_uses(src: &Source, body: Node, name: &str) -> StateUses {
    const MUTATORS: &[&str] = &[
        "append",
        "add",
        "update",
        "extend",
        "insert",
        "setdefault",
        "pop",
        "popitem",
        "remove",
        "discard",
        "clear",
        "appendleft",
        "extendleft",
        "__setitem__",
    ];
    let mut writes = 0;
    let mut memo = true;
    let mut keys: BTreeSet<String> = BTreeSet::new();
    let is_state = |n: Node| {
        (n.kind() == "identifier" && src.text(n) == name)
            || (n.kind() == "attribute"
                && n.child_by_field_name("attribute")
                    .is_some_and(|a| src.text(a) == name))
    };
    for n in descendants(body) {
        if !is_state(n) {
            continue;
        }
        let Some(p) = n.parent() else { continue };
        match p.kind() {
            "subscript" if p.child_by_field_name("value") == Some(n) => {
                if let Some(k) = p.child_by_field_name("subscript") {
                    keys.insert(src.text(k).to_string());
                }
                let target = p.parent().is_some_and(|a| {
                    matches!(a.kind(), "assignment" | "augmented_assignment")
                        && a.child_by_field_name("left") == Some(p)
                });
                if target {
                    writes += 1;
                    if p.parent()
                        .is_some_and(|a| a.kind() == "augmented_assignment")
                    {
                        memo = false;
                    }
                }
            }
            "attribute" if p.child_by_field_name("object") == Some(n) => {
                let m = p
                    .child_by_field_name("attribute")
                    .map_or("", |a| src.text(a));
                let called = p.parent().is_some_and(|c| c.kind() == "call");
                let args = p.parent().and_then(|c| c.child_by_field_name("arguments"));
                if called && m == "setdefault" {
                    // `S.setdefault(k, compute(k))`: the first value computed for `k` is
                    // kept, as `S[k] = v` after a miss keeps it.
                    writes += 1;
                    match args.map(named_kids).as_deref() {
                        Some([k, _]) => {
                            keys.insert(src.text(*k).to_string());
                        }
                        _ => memo = false,
                    }
                } else if called && MUTATORS.contains(&m) {
                    writes += 1;
                    if m != "clear" {
                        memo = false;
                    }
                } else if m == "get"
                    && let Some(args) = p.parent().and_then(|c| c.child_by_field_name("arguments"))
                    && let Some(k) = named_kids(args).first()
                {
                    keys.insert(src.text(*k).to_string());
                    // `S.get(k, computed)`: a remembered value overrides what was computed.
                    if named_kids(args)
                        .get(1)
                        .is_some_and(|d| constant_value(src, *d).is_none())
                    {
                        memo = false;
                    }
                } else {
                    memo = false;
                }
            }
            "comparison_operator" => {
                let ops = kids(p);
                let is_in = ops.iter().any(|o| !o.is_named() && src.text(*o) == "in");
                let first = named_kids(p).first().copied();
                match first {
                    Some(k) if is_in && k != n => {
                        keys.insert(src.text(k).to_string());
                    }
                    _ => memo = false,
                }
            }
            "argument_list"
                if p.parent()
                    .and_then(|c| c.child_by_field_name("function"))
                    .is_some_and(|f| src.text(f) == "len") => {}
            "assignment" | "augmented_assignment" if p.child_by_field_name("left") == Some(n) => {
                writes += 1;
                memo = false;
            }
            "global_statement" | "nonlocal_statement" => {}
            _ => memo = false,
        }
    }
    StateUses {
        writes,
        memo: memo && keys.len() <= 1,
    }
}
