//! Failing-code context for the first prompt: the failing test *function* (not its file), the
//! repository frames of its traceback (code before tests) and the source of the non-test
//! functions on those frames or called by the test, each with `path:line`, within a byte budget.
//!
//! Small models given only the test output open the whole test file and edit the tests; shown
//! the function that raised and the code the test calls, they start where the bug is.
//!
//! Three pure steps so every rule is unit-tested on real pytest output:
//! [`plan`] (test output + failing ids → what to read), [`ContextPlan::imports`] (the test
//! files → the modules they import, read in a second round) and [`render`] (file contents +
//! budget → the text and the [`Focus`] the tools steer with). Reading the files through the
//! sandbox is [`crate::agent::task::failing_context`]'s job. Python only: tree-sitter-python is
//! the one grammar the crate carries; other languages get no context (the task is unchanged).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use regex::Regex;
use tree_sitter::Tree;

mod syntax;

pub(crate) use syntax::parse;
use syntax::{
    Call, all_defs, calls, enclosing_def, find_def, find_def_anywhere, imports, outer_statement,
};

/// Default size of the rendered context, bytes.
pub const DEFAULT_BUDGET: usize = 3 * 1024;
/// Failing tests whose sections and functions are read (the first ones; the rest add noise).
const MAX_TESTS: usize = 3;
/// Traceback frames listed.
const MAX_FRAMES: usize = 8;
/// Code functions shown.
const MAX_FUNCTIONS: usize = 4;

/// One traceback frame inside the repository (path relative to the workspace).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    pub path: String,
    pub line: usize,
    /// As the traceback names it (`total`, `<module>`, `<listcomp>`), when it does.
    pub func: Option<String>,
}

/// A failing test id, split (`tests/t.py::TestK::test_m[1-2]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TestRef {
    pub id: String,
    pub path: String,
    pub class: Option<String>,
    /// Without the parameter part.
    pub name: String,
}

impl TestRef {
    /// `None` for ids that are not pytest node ids of a `.py` file.
    pub fn parse(id: &str) -> Option<TestRef> {
        let t = crate::testid::TestId::new(id);
        if !t.is_pytest() {
            return None;
        }
        Some(TestRef {
            id: id.to_string(),
            path: t.file().to_string(),
            class: t.class().map(str::to_string),
            name: t.function()?.to_string(),
        })
    }

    /// pytest's section title of this test: `TestK.test_m[1-2]`.
    pub fn head_line(&self) -> String {
        crate::testid::TestId::new(self.id.as_str()).title()
    }
}

/// What to read for a context. Pure value; [`plan`] builds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextPlan {
    pub tests: Vec<TestRef>,
    /// Repository frames of the failing tests' tracebacks, in traceback order, each once.
    pub frames: Vec<Frame>,
}

/// A file a test path heuristic calls a test (or conftest) file.
pub fn is_test_path(path: &str) -> bool {
    let file = path.rsplit('/').next().unwrap_or(path);
    file.starts_with("test_")
        || file.ends_with("_test.py")
        || file == "conftest.py"
        || path
            .split('/')
            .rev()
            .skip(1)
            .any(|d| matches!(d, "tests" | "test" | "testing"))
}

static SECTION: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^_{2,} (.+?) _{2,}\s*$").expect("static regex"));
/// `path:line: in func` (short), `path:line: ` / `path:line: ValueError` (long).
static LOCATION: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\S[^:]*?\.py):(\d+):(?: in (\S+)|\s.*)?$").expect("static regex")
});
/// `File "path", line N, in func` (native tracebacks, SyntaxError displays).
static FILE_FRAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"File "([^"]+\.py)", line (\d+)(?:, in (\S+))?"#).expect("static regex")
});

/// The plan from a test run's output and its failing ids, paths relative to the sandbox
/// workspace. Pure.
pub fn plan(output: &str, failing_ids: &[String]) -> ContextPlan {
    plan_in(output, failing_ids, crate::sandbox::WORKSPACE)
}

/// [`plan`] with the directory the tests ran in (absolute paths under it are the repository's;
/// every other absolute path — the standard library, site-packages — is not). Pure.
pub fn plan_in(output: &str, failing_ids: &[String], root: &str) -> ContextPlan {
    let tests: Vec<TestRef> = failing_ids
        .iter()
        .filter_map(|id| TestRef::parse(id))
        .take(MAX_TESTS)
        .collect();
    // Sections by title; lines before the first title belong to none.
    let mut sections: Vec<(String, Vec<&str>)> = Vec::new();
    for line in output.lines() {
        if let Some(c) = SECTION.captures(line) {
            sections.push((c[1].to_string(), Vec::new()));
        } else if let Some((_, body)) = sections.last_mut() {
            body.push(line);
        }
    }
    let wanted = |title: &str| {
        tests.iter().any(|t| {
            let head = t.head_line();
            let bare = title
                .strip_prefix("ERROR at setup of ")
                .or_else(|| title.strip_prefix("ERROR at teardown of "))
                .unwrap_or(title);
            bare == head || title == format!("ERROR collecting {}", t.path)
        }) || title.starts_with("ERROR collecting ")
    };
    let chosen: Vec<&str> = sections
        .iter()
        .filter(|(title, _)| wanted(title))
        .flat_map(|(_, body)| body.iter().copied())
        .collect();
    // No section names a failing test (`--tb=line`, a custom runner): read the whole output.
    let lines: Vec<&str> = if chosen.is_empty() {
        output.lines().collect()
    } else {
        chosen
    };
    let mut frames: Vec<Frame> = Vec::new();
    for line in lines {
        let found = LOCATION
            .captures(line)
            .or_else(|| FILE_FRAME.captures(line));
        let Some(c) = found else { continue };
        let Some(path) = repo_path(&c[1], root) else {
            continue;
        };
        let Ok(n) = c[2].parse::<usize>() else {
            continue;
        };
        let func = c.get(3).map(|m| m.as_str().to_string());
        match frames.iter_mut().find(|f| f.path == path && f.line == n) {
            // Long format names the function only in some frames: keep the name once seen.
            Some(f) => {
                if f.func.is_none() {
                    f.func = func;
                }
            }
            None => frames.push(Frame {
                path,
                line: n,
                func,
            }),
        }
    }
    ContextPlan { tests, frames }
}

/// A traceback path as a workspace-relative path, or `None` outside the repository.
fn repo_path(p: &str, root: &str) -> Option<String> {
    let root = root.trim_end_matches('/');
    let rel = if p.starts_with('/') {
        p.strip_prefix(root)?.strip_prefix('/')?
    } else {
        p.strip_prefix("./").unwrap_or(p)
    };
    let bad = rel.is_empty()
        || rel.starts_with('<')
        || rel.split('/').any(|c| c == ".." || c.is_empty())
        || rel.contains("site-packages/")
        || rel.contains("dist-packages/");
    (!bad).then(|| rel.to_string())
}

impl ContextPlan {
    /// The files of the first round: the failing tests' files and the frames' files.
    pub fn files(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for p in self
            .tests
            .iter()
            .map(|t| &t.path)
            .chain(self.frames.iter().map(|f| &f.path))
        {
            if !out.contains(p) {
                out.push(p.clone());
            }
        }
        out
    }

    /// The second round: candidate files of the modules the failing test files import and
    /// whose names the test functions call (missing candidates are simply not found). Pure.
    pub fn imports(&self, files: &BTreeMap<String, String>) -> Vec<String> {
        let mut out = Vec::new();
        for t in &self.tests {
            let Some(src) = files.get(&t.path) else {
                continue;
            };
            let Some(tree) = parse(src) else { continue };
            let Some(func) = find_def(&tree, src, t.class.as_deref(), &t.name) else {
                continue;
            };
            let called = calls(func.node, src);
            for imp in imports(&tree, src) {
                let used = called.iter().any(|c| match c {
                    Call::Name(n) => *n == imp.local,
                    Call::Attr(obj, _) => *obj == imp.local,
                });
                if !used {
                    continue;
                }
                for p in module_files(&imp.module, imp.level, &t.path)
                    .into_iter()
                    .chain(imp.name.as_ref().into_iter().flat_map(|n| {
                        module_files(&format!("{}.{n}", imp.module), imp.level, &t.path)
                    }))
                {
                    if !out.contains(&p) && !files.contains_key(&p) {
                        out.push(p);
                    }
                }
            }
        }
        out
    }
}

/// A source location the tools point at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub path: String,
    /// First and last line of the function (1-based, inclusive).
    pub start: usize,
    pub end: usize,
    /// `total`, `Cart.count`, or `<module>` for a frame outside any function.
    pub name: String,
    /// The traceback's line in it, if a frame is in it.
    pub frame_line: Option<usize>,
}

impl Location {
    /// `shop/prices.py:15 total` (the traceback's line when there is one).
    pub fn label(&self) -> String {
        match self.frame_line {
            Some(l) if l != self.start => {
                format!(
                    "{}:{} {} (traceback line {l})",
                    self.path, self.start, self.name
                )
            }
            _ => format!("{}:{} {}", self.path, self.start, self.name),
        }
    }

    /// The `view_file` call that shows this location.
    pub fn view_call(&self) -> String {
        format!(
            r#"{{"name": "view_file", "arguments": {{"path": "{}", "start_line": {}, "end_line": {}}}}}"#,
            self.path,
            self.start,
            self.end.max(self.start)
        )
    }
}

/// What the tools steer with: where the code under test is, which lines of which file the
/// context names, and which paths are read-only. Empty when there is no context.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Focus {
    /// Code under test, most relevant first.
    pub code: Vec<Location>,
    /// The failing test functions.
    pub tests: Vec<Location>,
    /// Lines the context names in each file, most relevant first.
    pub lines: BTreeMap<String, Vec<usize>>,
    /// Read-only directories (workspace-relative, e.g. `tests`), from the container policy.
    pub read_only: Vec<String>,
}

impl Focus {
    /// Whether `path` lies in a read-only (test) directory.
    pub fn is_read_only(&self, path: &str) -> bool {
        let p = normalize(path);
        self.read_only.iter().any(|d| {
            let d = normalize(d);
            let d = d.trim_end_matches('/');
            !d.is_empty() && (p == d || p.starts_with(&format!("{d}/")))
        })
    }

    /// The first line the context names in `path`.
    pub fn line_in(&self, path: &str) -> Option<usize> {
        self.lines
            .get(&normalize(path))
            .and_then(|l| l.first().copied())
    }

    /// Where to look instead, for a model stuck on the tests: the code locations (or, with no
    /// context, how to find them) and one concrete call. `viewed` is a `view_file` being
    /// repeated (path, start_line): a location it already shows is not suggested again.
    pub fn where_to_look(&self, viewed: Option<(&str, Option<usize>)>) -> String {
        if self.code.is_empty() {
            return "Find the function the failing test calls and read it: \
                    search {\"pattern\": \"def NAME\"}, then view_file with start_line/end_line."
                .to_string();
        }
        let mut s =
            String::from("The failing test runs this code (not a test; the bug is likely here):\n");
        for l in self.code.iter().take(MAX_FUNCTIONS) {
            s.push_str(&format!("- {}\n", l.label()));
        }
        let shown = |l: &Location| {
            viewed.is_some_and(|(p, start)| normalize(p) == l.path && start == Some(l.start))
        };
        match self.code.iter().find(|l| !shown(l)) {
            Some(l) => s.push_str(&format!("Read it: {}", l.view_call())),
            None => s.push_str(
                "You have read it: fix it with str_replace (old_str copied exactly, without the \
                 line numbers), then run_tests.",
            ),
        }
        s
    }
}

/// `./a.py`, `/workspace/a.py` → `a.py`.
fn normalize(path: &str) -> String {
    let p = path.trim();
    let p = p
        .strip_prefix(crate::sandbox::WORKSPACE)
        .map(|r| r.trim_start_matches('/'))
        .unwrap_or(p);
    let mut p = p;
    while let Some(r) = p.strip_prefix("./") {
        p = r;
    }
    p.to_string()
}

/// The rendered context: the text for the task and the focus for the tools.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Context {
    pub text: String,
    pub focus: Focus,
}

/// Render the context within `budget` bytes from the plan and the files read (missing files
/// are skipped). Empty text when nothing could be located. Pure.
pub fn render(plan: &ContextPlan, files: &BTreeMap<String, String>, budget: usize) -> Context {
    let mut trees: BTreeMap<&str, Tree> = BTreeMap::new();
    for (p, src) in files {
        if p.ends_with(".py")
            && let Some(t) = parse(src)
        {
            trees.insert(p.as_str(), t);
        }
    }
    let mut focus = Focus::default();
    fn note(focus: &mut Focus, path: &str, line: usize) {
        let v = focus.lines.entry(path.to_string()).or_default();
        if !v.contains(&line) {
            v.push(line);
        }
    }

    // The failing test functions.
    let mut test_funcs: Vec<(Location, &str)> = Vec::new();
    for t in &plan.tests {
        let (Some(src), Some(tree)) = (files.get(&t.path), trees.get(t.path.as_str())) else {
            continue;
        };
        let Some(def) = find_def(tree, src, t.class.as_deref(), &t.name) else {
            continue;
        };
        let frame_line = plan
            .frames
            .iter()
            .find(|f| f.path == t.path && (def.start..=def.end).contains(&f.line))
            .map(|f| f.line);
        let loc = Location {
            path: t.path.clone(),
            start: def.start,
            end: def.end,
            name: crate::testid::TestId::new(t.id.as_str()).names().join("::"),
            frame_line,
        };
        if focus
            .tests
            .iter()
            .all(|l| l.start != loc.start || l.path != loc.path)
        {
            note(&mut focus, &t.path, frame_line.unwrap_or(def.start));
            focus.tests.push(loc.clone());
            test_funcs.push((loc, src.as_str()));
        }
    }

    // Code under test: the non-test frames' functions (outermost first), then the functions
    // the test calls.
    let test_paths: BTreeSet<&str> = plan.tests.iter().map(|t| t.path.as_str()).collect();
    let is_test = |p: &str| test_paths.contains(p) || is_test_path(p);
    let mut code: Vec<Location> = Vec::new();
    fn push_code(code: &mut Vec<Location>, loc: Location) {
        if !code
            .iter()
            .any(|c| c.path == loc.path && c.start == loc.start)
        {
            code.push(loc);
        }
    }
    for f in plan.frames.iter().filter(|f| !is_test(&f.path)) {
        let (Some(src), Some(tree)) = (files.get(&f.path), trees.get(f.path.as_str())) else {
            continue;
        };
        let loc = match enclosing_def(tree, src, f.line) {
            Some(d) => Location {
                path: f.path.clone(),
                start: d.start,
                end: d.end,
                name: d.name,
                frame_line: Some(f.line),
            },
            // Module level (an import-time error): a few lines around the frame.
            None => Location {
                path: f.path.clone(),
                start: f.line.saturating_sub(3).max(1),
                end: (f.line + 3).min(src.lines().count()),
                name: "<module>".into(),
                frame_line: Some(f.line),
            },
        };
        push_code(&mut code, loc);
    }
    for t in &plan.tests {
        let (Some(src), Some(tree)) = (files.get(&t.path), trees.get(t.path.as_str())) else {
            continue;
        };
        let Some(def) = find_def(tree, src, t.class.as_deref(), &t.name) else {
            continue;
        };
        let imports = imports(tree, src);
        for call in calls(def.node, src) {
            let (target_mod, fname, attr_anywhere) = match &call {
                Call::Name(n) => match imports.iter().find(|i| i.local == *n) {
                    Some(i) => (Some(i), i.name.clone().unwrap_or_else(|| n.clone()), false),
                    None => continue,
                },
                // `self.assertEqual(...)`: the test's own class, not the code under test.
                Call::Attr(obj, _) if obj == "self" => continue,
                Call::Attr(obj, attr) => match imports.iter().find(|i| i.local == *obj) {
                    Some(i) => (Some(i), attr.clone(), false),
                    None => (None, attr.clone(), true),
                },
            };
            // Candidate files: the import's module files; for a method on an object, every
            // non-test file read.
            let candidates: Vec<String> = match target_mod {
                Some(i) if !attr_anywhere => {
                    // `from pkg import f` where `pkg/__init__.py` re-exports `f` from `pkg/f.py`,
                    // or `from pkg import mod` then `mod.f()`: the submodule too.
                    let mut c = module_files(&i.module, i.level, &t.path);
                    if let Some(n) = &i.name {
                        c.extend(module_files(&format!("{}.{n}", i.module), i.level, &t.path));
                    }
                    c
                }
                _ => files.keys().filter(|p| !is_test(p)).cloned().collect(),
            };
            for p in candidates {
                let (Some(src), Some(tree)) = (files.get(&p), trees.get(p.as_str())) else {
                    continue;
                };
                if let Some(d) = find_def_anywhere(tree, src, &fname) {
                    push_code(
                        &mut code,
                        Location {
                            path: p.clone(),
                            start: d.start,
                            end: d.end,
                            name: d.name,
                            frame_line: None,
                        },
                    );
                    break;
                }
            }
        }
    }
    code.truncate(MAX_FUNCTIONS);
    for c in &code {
        note(&mut focus, &c.path, c.start);
    }
    for f in &plan.frames {
        note(&mut focus, &f.path, f.line);
    }

    if test_funcs.is_empty() && code.is_empty() && plan.frames.is_empty() {
        return Context::default();
    }

    // The text, within the budget: the frame list (small), the tests (at most a third), then
    // the code with what is left.
    let mut out = String::from(
        "Failing-code context (from the traceback and the syntax tree; numbers are line numbers, \
         as view_file shows them):\n",
    );
    let mut frames: Vec<&Frame> = plan.frames.iter().filter(|f| !is_test(&f.path)).collect();
    frames.extend(plan.frames.iter().filter(|f| is_test(&f.path)));
    if !frames.is_empty() {
        out.push_str("Traceback frames in the repository (code first, then tests):\n");
        for f in frames.iter().take(MAX_FRAMES) {
            let tag = if is_test(&f.path) { " [test]" } else { "" };
            match &f.func {
                Some(func) => out.push_str(&format!("- {}:{} in {func}{tag}\n", f.path, f.line)),
                None => out.push_str(&format!("- {}:{}{tag}\n", f.path, f.line)),
            }
        }
    }
    let test_budget = budget / 3;
    for (loc, src) in &test_funcs {
        let room = test_budget.min(budget.saturating_sub(out.len()));
        let head = format!(
            "\nFailing test {} ({}:{}, read-only: do not edit):\n",
            loc.name, loc.path, loc.start
        );
        if !push_excerpt(&mut out, &head, src, loc, room) {
            break;
        }
    }
    if !code.is_empty() {
        out.push_str("\nCode the failing test runs (not a test; the bug is likely here):\n");
    }
    for loc in &code {
        let Some(src) = files.get(&loc.path) else {
            continue;
        };
        let head = format!("{}:\n", loc.label());
        let room = budget.saturating_sub(out.len());
        if !push_excerpt(&mut out, &head, src, loc, room) {
            break;
        }
    }
    focus.code = code;
    Context { text: out, focus }
}

/// `head` and the excerpt of `loc` in `src` appended to `out` within `room` bytes; false (and
/// nothing appended) when not even the head and a few lines fit.
fn push_excerpt(out: &mut String, head: &str, src: &str, loc: &Location, room: usize) -> bool {
    if room < head.len() + 80 {
        return false;
    }
    out.push_str(head);
    out.push_str(&excerpt(
        src,
        loc.start,
        loc.end,
        loc.frame_line,
        room - head.len(),
    ));
    true
}

/// Every function definition of `src` (pre-order: an enclosing one before those inside it),
/// as locations in `path`. Pure.
pub fn functions(path: &str, src: &str) -> Vec<Location> {
    let Some(tree) = parse(src) else {
        return Vec::new();
    };
    all_defs(&tree, src)
        .into_iter()
        .map(|d| Location {
            path: path.to_string(),
            start: d.start,
            end: d.end,
            name: d.name,
            frame_line: None,
        })
        .collect()
}

/// For each line, the statement outside any function that holds it (module level or a class
/// body), as a `<module>` location: code that runs at import, or a lambda a table holds.
/// Keyed by each of `lines` that has one. Pure.
pub fn module_statements(path: &str, src: &str, lines: &[usize]) -> BTreeMap<usize, Location> {
    let Some(tree) = parse(src) else {
        return BTreeMap::new();
    };
    lines
        .iter()
        .filter_map(|&line| {
            let (start, end) = outer_statement(&tree, line)?;
            Some((
                line,
                Location {
                    path: path.to_string(),
                    start,
                    end,
                    name: "<module>".into(),
                    frame_line: None,
                },
            ))
        })
        .collect()
}

/// Definitions in `src` whose bare name is one of `names`, as locations in `path`. Pure.
pub fn defs_named(path: &str, src: &str, names: &[String]) -> Vec<Location> {
    functions(path, src)
        .into_iter()
        .filter(|d| {
            let bare = d.name.rsplit('.').next().unwrap_or(&d.name);
            names.iter().any(|n| n == bare)
        })
        .collect()
}

/// Lines `start..=end` of `src`, numbered, in at most `max` bytes: the whole range if it fits,
/// else the first line and the lines nearest `focus`, with `...` for gaps. Pure.
pub fn excerpt(src: &str, start: usize, end: usize, focus: Option<usize>, max: usize) -> String {
    let lines: Vec<&str> = src.lines().collect();
    let end = end.min(lines.len());
    if start == 0 || start > end {
        return String::new();
    }
    let width = end.to_string().len();
    let fmt = |n: usize| format!("{n:>width$}  {}\n", lines[n - 1]);
    let all: String = (start..=end).map(fmt).collect();
    if all.len() <= max {
        return all;
    }
    const GAP: &str = "    ...\n";
    let focus = focus.filter(|f| (start..=end).contains(f)).unwrap_or(start);
    let mut keep: BTreeSet<usize> = BTreeSet::new();
    let mut used = 0usize;
    let take = |n: usize, keep: &mut BTreeSet<usize>, used: &mut usize| -> bool {
        let cost = fmt(n).len() + GAP.len();
        if *used + cost > max {
            return false;
        }
        *used += cost;
        keep.insert(n);
        true
    };
    take(start, &mut keep, &mut used);
    // Grow around the focus line, the focus side first.
    let mut d = 0usize;
    loop {
        let below = focus + d;
        let above = focus.checked_sub(d).filter(|a| *a >= start);
        let mut any = false;
        if below <= end && !keep.contains(&below) {
            if !take(below, &mut keep, &mut used) {
                break;
            }
            any = true;
        }
        if let Some(a) = above
            && !keep.contains(&a)
        {
            if !take(a, &mut keep, &mut used) {
                break;
            }
            any = true;
        }
        if !any && below > end && above.is_none() {
            break;
        }
        d += 1;
    }
    let mut out = String::new();
    let mut prev: Option<usize> = None;
    for n in keep {
        if prev.is_some_and(|p| p + 1 != n) {
            out.push_str(GAP);
        }
        out.push_str(&fmt(n));
        prev = Some(n);
    }
    if prev.is_some_and(|p| p < end) {
        out.push_str(GAP);
    }
    out
}

/// The files a module may live in, relative to the workspace (`src/` layouts too).
fn module_files(module: &str, level: usize, from_file: &str) -> Vec<String> {
    let rel = module.replace('.', "/");
    let bases: Vec<String> = if level > 0 {
        let mut dir: Vec<&str> = from_file.split('/').collect();
        dir.pop();
        for _ in 1..level {
            dir.pop();
        }
        vec![dir.join("/")]
    } else {
        vec![String::new(), "src".into()]
    };
    let mut out = Vec::new();
    for b in bases {
        let stem = [b.as_str(), rel.as_str()]
            .iter()
            .filter(|s| !s.is_empty())
            .copied()
            .collect::<Vec<_>>()
            .join("/");
        if stem.is_empty() {
            continue;
        }
        out.push(format!("{stem}.py"));
        out.push(format!("{stem}/__init__.py"));
    }
    out
}

#[cfg(test)]
mod tests;
