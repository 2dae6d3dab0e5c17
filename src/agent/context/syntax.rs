//! Tree-sitter reads of Python source (definitions, calls, imports), below the context's rules.

use tree_sitter::{Node, Parser, Tree};

/// The Python syntax tree of `src` (the candidate strategy reads definitions from it too).
pub(crate) fn parse(src: &str) -> Option<Tree> {
    let mut parser = Parser::new();
    parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .ok()?;
    parser.parse(src, None)
}

pub(super) struct Def<'t> {
    pub(super) node: Node<'t>,
    /// 1-based, inclusive; a decorated definition starts at its first decorator.
    pub(super) start: usize,
    pub(super) end: usize,
    /// `name` or `Class.name`.
    pub(super) name: String,
}

fn text<'a>(n: Node, src: &'a str) -> &'a str {
    n.utf8_text(src.as_bytes()).unwrap_or("")
}

fn def_of<'t>(n: Node<'t>, src: &str, class: Option<&str>) -> Option<Def<'t>> {
    let func = if n.kind() == "decorated_definition" {
        n.child_by_field_name("definition")?
    } else {
        n
    };
    if func.kind() != "function_definition" {
        return None;
    }
    let name = text(func.child_by_field_name("name")?, src);
    Some(Def {
        node: func,
        start: n.start_position().row + 1,
        end: n.end_position().row + 1,
        name: match class {
            Some(c) => format!("{c}.{name}"),
            None => name.to_string(),
        },
    })
}

/// The class a definition node sits in directly (`class K: def m`), if any.
fn class_of(n: Node, src: &str) -> Option<String> {
    let mut p = n.parent();
    while let Some(x) = p {
        match x.kind() {
            "class_definition" => {
                return x
                    .child_by_field_name("name")
                    .map(|c| text(c, src).to_string());
            }
            "function_definition" => return None,
            _ => p = x.parent(),
        }
    }
    None
}

/// Every function definition (decorated ones as their decorated node), pre-order.
pub(super) fn all_defs<'t>(tree: &'t Tree, src: &str) -> Vec<Def<'t>> {
    let mut out = Vec::new();
    let mut cursor = tree.root_node().walk();
    'walk: loop {
        let n = cursor.node();
        let skip_inner = n.kind() == "function_definition"
            && n.parent()
                .is_some_and(|p| p.kind() == "decorated_definition");
        if !skip_inner && let Some(d) = def_of(n, src, class_of(n, src).as_deref()) {
            out.push(d);
        }
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
    out
}

/// The statement outside any function that holds `line`, 1-based inclusive: a module-level
/// one, or one in a class body (a table of lambdas, a constant, a class attribute). None
/// inside a function or outside every statement.
pub(super) fn outer_statement(tree: &Tree, line: usize) -> Option<(usize, usize)> {
    let span = |n: Node| (n.start_position().row + 1, n.end_position().row + 1);
    let mut scope = tree.root_node();
    loop {
        let mut cursor = scope.walk();
        let hit = scope
            .named_children(&mut cursor)
            .find(|c| (span(*c).0..=span(*c).1).contains(&line))?;
        let inner = if hit.kind() == "decorated_definition" {
            hit.child_by_field_name("definition")?
        } else {
            hit
        };
        match inner.kind() {
            "function_definition" => return None,
            "class_definition" => scope = inner.child_by_field_name("body")?,
            _ => return Some(span(hit)),
        }
    }
}

/// `def name` (inside `class` when given) at module or class level.
pub(super) fn find_def<'t>(
    tree: &'t Tree,
    src: &str,
    class: Option<&str>,
    name: &str,
) -> Option<Def<'t>> {
    let want = match class {
        Some(c) => format!("{c}.{name}"),
        None => name.to_string(),
    };
    all_defs(tree, src).into_iter().find(|d| d.name == want)
}

/// A function or method called `name` anywhere in the file.
pub(super) fn find_def_anywhere<'t>(tree: &'t Tree, src: &str, name: &str) -> Option<Def<'t>> {
    all_defs(tree, src)
        .into_iter()
        .find(|d| d.name == name || d.name.ends_with(&format!(".{name}")))
}

/// The innermost function containing `line`.
pub(super) fn enclosing_def<'t>(tree: &'t Tree, src: &str, line: usize) -> Option<Def<'t>> {
    all_defs(tree, src)
        .into_iter()
        .filter(|d| (d.start..=d.end).contains(&line))
        .min_by_key(|d| d.end - d.start)
}

#[derive(Debug, PartialEq)]
pub(super) enum Call {
    /// `f(...)`
    Name(String),
    /// `obj.attr(...)`: the object's first name and the attribute.
    Attr(String, String),
}

/// The calls in a function body, in source order, each once.
pub(super) fn calls(func: Node, src: &str) -> Vec<Call> {
    let mut out: Vec<Call> = Vec::new();
    let mut stack = vec![func];
    while let Some(n) = stack.pop() {
        if n.kind() == "call"
            && let Some(f) = n.child_by_field_name("function")
        {
            let c = match f.kind() {
                "identifier" => Some(Call::Name(text(f, src).to_string())),
                "attribute" => {
                    let attr = f.child_by_field_name("attribute").map(|a| text(a, src));
                    let mut obj = f.child_by_field_name("object");
                    // `a.b.c()` → the root name `a`.
                    while let Some(o) = obj.filter(|o| o.kind() == "attribute") {
                        obj = o.child_by_field_name("object");
                    }
                    let root = obj
                        .filter(|o| o.kind() == "identifier")
                        .map(|o| text(o, src).to_string())
                        // `Cart().add()`: a call's result; matched by attribute anywhere.
                        .unwrap_or_default();
                    attr.map(|a| Call::Attr(root, a.to_string()))
                }
                _ => None,
            };
            if let Some(c) = c
                && !out.contains(&c)
            {
                out.push(c);
            }
        }
        let mut cur = n.walk();
        let kids: Vec<Node> = n.children(&mut cur).collect();
        stack.extend(kids.into_iter().rev());
    }
    // Source order: the stack walk is pre-order already; outer calls come before inner ones.
    out
}

/// One name a module-level import binds.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Import {
    /// The name bound in the test module.
    pub(super) local: String,
    /// The module (`shop.prices`; `` for `from . import x`).
    pub(super) module: String,
    /// Leading dots of a relative import.
    pub(super) level: usize,
    /// The imported name (`from m import name`); `None` for `import m`.
    pub(super) name: Option<String>,
}

pub(super) fn imports(tree: &Tree, src: &str) -> Vec<Import> {
    let mut out = Vec::new();
    let root = tree.root_node();
    let mut cur = root.walk();
    for n in root.children(&mut cur) {
        match n.kind() {
            "import_statement" => {
                let mut c = n.walk();
                for name in n.children_by_field_name("name", &mut c) {
                    let (module, local) = aliased(name, src);
                    let local = local
                        .unwrap_or_else(|| module.split('.').next().unwrap_or(&module).to_string());
                    out.push(Import {
                        local,
                        module,
                        level: 0,
                        name: None,
                    });
                }
            }
            "import_from_statement" => {
                let Some(m) = n.child_by_field_name("module_name") else {
                    continue;
                };
                let raw = text(m, src);
                let level = raw.chars().take_while(|c| *c == '.').count();
                let module = raw[level..].to_string();
                let mut c = n.walk();
                for name in n.children_by_field_name("name", &mut c) {
                    let (orig, local) = aliased(name, src);
                    out.push(Import {
                        local: local.unwrap_or_else(|| orig.clone()),
                        module: module.clone(),
                        level,
                        name: Some(orig),
                    });
                }
            }
            _ => {}
        }
    }
    out
}

/// `a.b as c` → (`a.b`, Some(`c`)); `a.b` → (`a.b`, None).
fn aliased(n: Node, src: &str) -> (String, Option<String>) {
    if n.kind() == "aliased_import" {
        let name = n
            .child_by_field_name("name")
            .map(|x| text(x, src).to_string())
            .unwrap_or_default();
        let alias = n
            .child_by_field_name("alias")
            .map(|x| text(x, src).to_string());
        (name, alias)
    } else {
        (text(n, src).to_string(), None)
    }
}
