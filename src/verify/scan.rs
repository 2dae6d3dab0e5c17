//! Semantic patch analysis: which runtime capabilities a patch ADDS to a non-test Python file.
//!
//! A bug fix has no business reaching into the test framework, the interpreter's hooks, call
//! frames or code objects. Line regexes on the diff miss aliases (`import sys as s`,
//! `m = sys`), string-built names (`getattr(__import__('unit' + 'test'), 'Test' + 'Case')`) and
//! code that only becomes dangerous through context the hunk does not show. So both the
//! pre- and the post-patch file are parsed (tree-sitter, error tolerant) and every name is
//! resolved through the file's imports and simple assignments to a dotted path
//! (`s.settrace` → `sys.settrace`), constant strings are folded (`'a' + 'b'`, `'a' 'b'`,
//! `''.join(['a', 'b'])`) and `getattr`/`setattr`/`delattr`/`__import__`/`import_module`/
//! `sys.modules[...]` with constant arguments are followed. Each use is classified into a
//! [`Capability`] kind.
//!
//! The rule ("only what is new counts"): per file, a kind is a finding when the post-patch file
//! uses it and the pre-patch file (the old path of a rename; nothing for a new file) does not
//! use that kind at all. Kinds are fine-grained on purpose (`tracing`, `import_system`,
//! `frames`, … rather than "uses sys"), so a library that already inspects frames may inspect
//! them again in a fix, but does not thereby get `sys.settrace` or the test framework for free.
//! Known limit: code whose kinds the base file already has is judged by the other layers only
//! (the guard, the outcome stream, the second runner), and so is a name built at run time from
//! non-constant data, except where the dynamic construct itself is a kind (`dynamic_import`,
//! `dynamic_code`, `dynamic_attribute` on a module).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;

use serde::Serialize;
use tree_sitter::{Node, Parser};

/// What a use of the runtime gives the code under test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// unittest, pytest, _pytest, pluggy, `pytest_*` hooks, `pytest_plugins`.
    TestFramework,
    /// The verification harness itself (`pl_guard`, its reports, JUnit files).
    Harness,
    Gc,
    /// sys.settrace / setprofile / monitoring, threading.settrace.
    Tracing,
    /// sys.addaudithook / sys.audit.
    AuditHook,
    /// sys.modules / meta_path / path_hooks / path_importer_cache, importlib machinery.
    ImportSystem,
    /// Call frames and tracebacks: f_back, f_locals, tb_frame, sys._getframe, inspect.stack, …
    Frames,
    /// Code objects: `__code__`, `__globals__`, `co_*`, types.CodeType, marshal.
    CodeObject,
    /// Assigning `__class__`, `__dict__`, `__defaults__`, `__bases__`, … of an object.
    IdentityMutation,
    /// builtins / `__builtins__` / `__build_class__`.
    Builtins,
    /// ctypes / cffi.
    Native,
    /// Threads and timers (threading.Thread/Timer, _thread, executors, processes).
    Threads,
    /// PYTEST_* or other test-runner variables, sys.argv, `__main__`.
    TestContext,
    /// Reading the whole environment (iteration, copies, non-constant keys).
    EnvironmentScan,
    /// atexit, signal, faulthandler, weakref.finalize, excepthooks, `__del__`.
    ProcessHook,
    /// os._exit, os.kill, os.abort.
    ProcessExit,
    /// `__init_subclass__`, `__subclasses__`, metaclass-level hooks.
    ClassHook,
    /// exec / eval / compile.
    DynamicCode,
    /// `__import__` / importlib.import_module with a name built at run time.
    DynamicImport,
    /// getattr / setattr / delattr on a module with a name built at run time.
    DynamicAttribute,
    /// Assigning attributes of a standard-library or test-machinery module.
    Monkeypatch,
    /// The post-patch file does not parse while the pre-patch file did.
    Unparsable,
}

impl Capability {
    pub fn as_str(&self) -> &'static str {
        match self {
            Capability::TestFramework => "test_framework",
            Capability::Harness => "harness",
            Capability::Gc => "gc",
            Capability::Tracing => "tracing",
            Capability::AuditHook => "audit_hook",
            Capability::ImportSystem => "import_system",
            Capability::Frames => "frames",
            Capability::CodeObject => "code_object",
            Capability::IdentityMutation => "identity_mutation",
            Capability::Builtins => "builtins",
            Capability::Native => "native",
            Capability::Threads => "threads",
            Capability::TestContext => "test_context",
            Capability::EnvironmentScan => "environment_scan",
            Capability::ProcessHook => "process_hook",
            Capability::ProcessExit => "process_exit",
            Capability::ClassHook => "class_hook",
            Capability::DynamicCode => "dynamic_code",
            Capability::DynamicImport => "dynamic_import",
            Capability::DynamicAttribute => "dynamic_attribute",
            Capability::Monkeypatch => "monkeypatch",
            Capability::Unparsable => "unparsable",
        }
    }
}

impl fmt::Display for Capability {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One use of a capability in one file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Use {
    pub capability: Capability,
    /// 1-based line in the post-patch file.
    pub line: usize,
    /// What was reached, e.g. `sys.settrace` or `assignment to __code__`.
    pub detail: String,
}

/// A capability the patch adds to a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub path: String,
    pub capability: Capability,
    /// The first use in the post-patch file.
    pub line: usize,
    pub detail: String,
    /// How many uses of this kind the post-patch file has.
    pub uses: usize,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {} ({})",
            self.path, self.line, self.capability, self.detail
        )
    }
}

/// The semantic patch analysis of one patch: which non-test Python files were read before
/// and after the patch, and the capabilities the patch adds to them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AnalysisInfo {
    pub scanned: Vec<String>,
    pub findings: Vec<Finding>,
}

/// The files the semantic analysis reads: every non-test Python file the patch leaves in the
/// tree, with its pre-patch path (`None` for a new file).
pub fn targets(
    files: &[super::diff::FilePatch],
    tests_dirs: &[String],
    policy: &super::policy::PolicyConfig,
) -> Vec<(String, Option<String>)> {
    let mut cfg = policy.clone();
    cfg.tests_dirs = tests_dirs.to_vec();
    files
        .iter()
        .filter(|f| f.kind != super::diff::ChangeKind::Deleted)
        .filter_map(|f| {
            let new = f.new_path.clone()?;
            if !(new.ends_with(".py") || new.ends_with(".pyw"))
                || super::policy::is_test_path(&new, &cfg)
            {
                return None;
            }
            let old = match f.kind {
                super::diff::ChangeKind::Added => None,
                _ => f.old_path.clone().or_else(|| Some(new.clone())),
            };
            Some((new, old))
        })
        .collect()
}

/// Pure: the findings for the files read before and after `git apply`. A pre-patch file that
/// cannot be read counts as new (everything in it is judged); a post-patch file that cannot be
/// read is itself a finding.
pub fn analyse(
    scanned: &[(String, Option<String>)],
    pre: &BTreeMap<String, Option<String>>,
    post: &BTreeMap<String, Option<String>>,
) -> AnalysisInfo {
    let mut findings = Vec::new();
    for (path, old) in scanned {
        let before = old.as_ref().and_then(|o| pre.get(o).cloned().flatten());
        match post.get(path).cloned().flatten() {
            Some(text) => findings.extend(added_capabilities(path, before.as_deref(), &text)),
            None => findings.push(Finding {
                path: path.clone(),
                capability: Capability::Unparsable,
                line: 0,
                detail: "the patched file cannot be read as a regular file".into(),
                uses: 1,
            }),
        }
    }
    AnalysisInfo {
        scanned: scanned.iter().map(|(p, _)| p.clone()).collect(),
        findings,
    }
}

/// The findings for one file: kinds the post-patch text uses that the pre-patch text does not.
/// `pre` is `None` for a new file (every use counts).
pub fn added_capabilities(path: &str, pre: Option<&str>, post: &str) -> Vec<Finding> {
    let post_uses = uses(post);
    let pre_kinds: BTreeSet<Capability> = pre
        .map(|p| uses(p).into_iter().map(|u| u.capability).collect())
        .unwrap_or_default();
    let mut by_kind: BTreeMap<Capability, (Use, usize)> = BTreeMap::new();
    for u in post_uses {
        if pre_kinds.contains(&u.capability) {
            continue;
        }
        by_kind
            .entry(u.capability)
            .and_modify(|e| e.1 += 1)
            .or_insert((u, 1));
    }
    by_kind
        .into_values()
        .map(|(u, n)| Finding {
            path: path.to_string(),
            capability: u.capability,
            line: u.line,
            detail: u.detail,
            uses: n,
        })
        .collect()
}

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

/// Modules whose every use is a capability.
const MODULE_KINDS: &[(&str, Capability)] = &[
    ("unittest", Capability::TestFramework),
    ("_pytest", Capability::TestFramework),
    ("pytest", Capability::TestFramework),
    ("pluggy", Capability::TestFramework),
    ("doctest", Capability::TestFramework),
    ("nose", Capability::TestFramework),
    ("nose2", Capability::TestFramework),
    ("pl_guard", Capability::Harness),
    ("pl_run", Capability::Harness),
    ("pl_tool", Capability::Harness),
    ("gc", Capability::Gc),
    ("builtins", Capability::Builtins),
    ("__builtin__", Capability::Builtins),
    ("__builtins__", Capability::Builtins),
    ("ctypes", Capability::Native),
    ("_ctypes", Capability::Native),
    ("cffi", Capability::Native),
    ("_thread", Capability::Threads),
    ("_threading_local", Capability::Threads),
    ("multiprocessing", Capability::Threads),
    ("atexit", Capability::ProcessHook),
    ("signal", Capability::ProcessHook),
    ("_signal", Capability::ProcessHook),
    ("faulthandler", Capability::ProcessHook),
    ("marshal", Capability::CodeObject),
    ("__main__", Capability::TestContext),
    ("_imp", Capability::ImportSystem),
    ("imp", Capability::ImportSystem),
    ("zipimport", Capability::ImportSystem),
    ("pkgutil", Capability::ImportSystem),
    ("runpy", Capability::ImportSystem),
    ("linecache", Capability::Frames),
    ("sitecustomize", Capability::Harness),
    ("site", Capability::ImportSystem),
];

/// Exact dotted paths (or prefixes of them: `sys.modules` covers `sys.modules.pop`).
const PATH_KINDS: &[(&str, Capability)] = &[
    ("sys.settrace", Capability::Tracing),
    ("sys.gettrace", Capability::Tracing),
    ("sys.setprofile", Capability::Tracing),
    ("sys.monitoring", Capability::Tracing),
    ("sys.call_tracing", Capability::Tracing),
    ("threading.settrace", Capability::Tracing),
    ("threading.setprofile", Capability::Tracing),
    ("threading.settrace_all_threads", Capability::Tracing),
    ("threading.setprofile_all_threads", Capability::Tracing),
    ("sys.addaudithook", Capability::AuditHook),
    ("sys.audit", Capability::AuditHook),
    ("sys.modules", Capability::ImportSystem),
    ("sys.meta_path", Capability::ImportSystem),
    ("sys.path_hooks", Capability::ImportSystem),
    ("sys.path_importer_cache", Capability::ImportSystem),
    ("sys.dont_write_bytecode", Capability::ImportSystem),
    ("importlib.abc", Capability::ImportSystem),
    ("importlib.machinery", Capability::ImportSystem),
    ("importlib._bootstrap", Capability::ImportSystem),
    ("importlib._bootstrap_external", Capability::ImportSystem),
    ("importlib.reload", Capability::ImportSystem),
    ("importlib.invalidate_caches", Capability::ImportSystem),
    ("importlib.util.spec_from_loader", Capability::ImportSystem),
    (
        "importlib.util.spec_from_file_location",
        Capability::ImportSystem,
    ),
    ("importlib.util.module_from_spec", Capability::ImportSystem),
    ("importlib.util.cache_from_source", Capability::ImportSystem),
    ("sys._getframe", Capability::Frames),
    ("sys._current_frames", Capability::Frames),
    ("sys._getframemodulename", Capability::Frames),
    ("sys.exc_info", Capability::Frames),
    ("sys.exception", Capability::Frames),
    ("sys.last_traceback", Capability::Frames),
    ("inspect.stack", Capability::Frames),
    ("inspect.currentframe", Capability::Frames),
    ("inspect.getouterframes", Capability::Frames),
    ("inspect.getinnerframes", Capability::Frames),
    ("inspect.trace", Capability::Frames),
    ("inspect.getframeinfo", Capability::Frames),
    ("inspect.getlineno", Capability::Frames),
    ("inspect.FrameInfo", Capability::Frames),
    ("inspect.Traceback", Capability::Frames),
    ("traceback.extract_stack", Capability::Frames),
    ("traceback.walk_stack", Capability::Frames),
    ("traceback.walk_tb", Capability::Frames),
    ("traceback.print_stack", Capability::Frames),
    ("traceback.format_stack", Capability::Frames),
    ("traceback.StackSummary", Capability::Frames),
    ("traceback.FrameSummary", Capability::Frames),
    ("types.FrameType", Capability::Frames),
    ("types.TracebackType", Capability::Frames),
    ("types.CodeType", Capability::CodeObject),
    ("types.FunctionType", Capability::CodeObject),
    ("types.LambdaType", Capability::CodeObject),
    ("sys.argv", Capability::TestContext),
    ("sys.orig_argv", Capability::TestContext),
    ("sys.excepthook", Capability::ProcessHook),
    ("sys.unraisablehook", Capability::ProcessHook),
    ("sys.breakpointhook", Capability::ProcessHook),
    ("sys.displayhook", Capability::ProcessHook),
    ("sys.stdout", Capability::Harness),
    ("sys.stderr", Capability::Harness),
    ("sys.__stdout__", Capability::Harness),
    ("sys.__stderr__", Capability::Harness),
    ("threading.excepthook", Capability::ProcessHook),
    ("threading._shutdown", Capability::ProcessHook),
    ("weakref.finalize", Capability::ProcessHook),
    ("os.register_at_fork", Capability::ProcessHook),
    ("os._exit", Capability::ProcessExit),
    ("os.kill", Capability::ProcessExit),
    ("os.killpg", Capability::ProcessExit),
    ("os.abort", Capability::ProcessExit),
    ("posix._exit", Capability::ProcessExit),
    ("posix.kill", Capability::ProcessExit),
    ("os.dup2", Capability::Harness),
    ("os.closerange", Capability::Harness),
    ("threading.Thread", Capability::Threads),
    ("threading.Timer", Capability::Threads),
    ("threading._start_new_thread", Capability::Threads),
    ("threading._start_joinable_thread", Capability::Threads),
    ("concurrent.futures", Capability::Threads),
    ("sched", Capability::Threads),
    ("exec", Capability::DynamicCode),
    ("eval", Capability::DynamicCode),
    ("compile", Capability::DynamicCode),
    ("builtins.exec", Capability::DynamicCode),
    ("builtins.eval", Capability::DynamicCode),
    ("builtins.compile", Capability::DynamicCode),
    ("object.__subclasses__", Capability::ClassHook),
    ("type.__subclasses__", Capability::ClassHook),
];

/// Attribute names that are a capability on any object.
const ATTR_KINDS: &[(&str, Capability)] = &[
    ("f_back", Capability::Frames),
    ("f_locals", Capability::Frames),
    ("f_globals", Capability::Frames),
    ("f_builtins", Capability::Frames),
    ("f_code", Capability::Frames),
    ("f_trace", Capability::Frames),
    ("f_lasti", Capability::Frames),
    ("tb_frame", Capability::Frames),
    ("tb_next", Capability::Frames),
    ("gi_frame", Capability::Frames),
    ("cr_frame", Capability::Frames),
    ("ag_frame", Capability::Frames),
    ("__traceback__", Capability::Frames),
    ("__code__", Capability::CodeObject),
    ("__globals__", Capability::CodeObject),
    ("__closure__", Capability::CodeObject),
    ("func_code", Capability::CodeObject),
    ("func_globals", Capability::CodeObject),
    ("co_code", Capability::CodeObject),
    ("co_consts", Capability::CodeObject),
    ("co_names", Capability::CodeObject),
    ("co_varnames", Capability::CodeObject),
    ("co_filename", Capability::CodeObject),
    ("co_name", Capability::CodeObject),
    ("co_flags", Capability::CodeObject),
    ("__builtins__", Capability::Builtins),
    ("__build_class__", Capability::Builtins),
    ("__subclasses__", Capability::ClassHook),
    ("__init_subclass__", Capability::ClassHook),
    ("__subclasshook__", Capability::ClassHook),
    ("__instancecheck__", Capability::ClassHook),
    ("__subclasscheck__", Capability::ClassHook),
    ("settrace", Capability::Tracing),
    ("setprofile", Capability::Tracing),
    ("addaudithook", Capability::AuditHook),
    ("meta_path", Capability::ImportSystem),
    ("path_hooks", Capability::ImportSystem),
    ("path_importer_cache", Capability::ImportSystem),
    ("_getframe", Capability::Frames),
    ("_current_frames", Capability::Frames),
    ("currentframe", Capability::Frames),
    ("getouterframes", Capability::Frames),
    ("extract_stack", Capability::Frames),
    ("get_objects", Capability::Gc),
    ("get_referrers", Capability::Gc),
    ("get_referents", Capability::Gc),
    ("_exit", Capability::ProcessExit),
    ("pytest_plugins", Capability::TestFramework),
    ("failureException", Capability::TestFramework),
    ("_outcome", Capability::TestFramework),
    ("_callTestMethod", Capability::TestFramework),
];

/// Attributes whose assignment changes an object in place while keeping its identity.
const IDENTITY_ATTRS: &[&str] = &[
    "__code__",
    "__class__",
    "__globals__",
    "__dict__",
    "__defaults__",
    "__kwdefaults__",
    "__bases__",
    "__closure__",
    "__call__",
    "__getattribute__",
    "__import__",
];

/// Method definitions that act outside the call that defines them.
const DEF_KINDS: &[(&str, Capability)] = &[
    ("__init_subclass__", Capability::ClassHook),
    ("__set_name__", Capability::ClassHook),
    ("__del__", Capability::ProcessHook),
];

/// Names a string constant may spell to reach a capability by `getattr`/`vars()[...]`.
fn string_kind(s: &str) -> Option<(Capability, String)> {
    let t = s.trim();
    if t.contains("PYTEST") || t.contains("pytest_") {
        return Some((Capability::TestContext, format!("string `{}`", clip(t))));
    }
    let lower = t.to_ascii_lowercase();
    if lower.contains("junit")
        || lower.contains("conftest")
        || t.contains("/tmp/pl-")
        || t.contains("guard.json")
    {
        return Some((Capability::Harness, format!("string `{}`", clip(t))));
    }
    let ident_like = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
    if !ident_like {
        return None;
    }
    // Plain words stay plain (`'signal'`, `'site'`, `'exec'` are ordinary dict keys); a
    // string counts when it spells a dotted sensitive path or one of these module names.
    if (t.contains('.') || STRING_MODULES.contains(&t))
        && let Some(k) = classify_path(t)
    {
        return Some((k, format!("string `{t}`")));
    }
    let last = t.rsplit('.').next().unwrap_or(t);
    ATTR_KINDS
        .iter()
        .find(|(a, _)| *a == last)
        .map(|(_, k)| (*k, format!("string `{t}`")))
}

const STRING_MODULES: &[&str] = &[
    "unittest",
    "_pytest",
    "pytest",
    "pluggy",
    "pl_guard",
    "pl_run",
    "builtins",
    "__builtins__",
    "__builtin__",
    "ctypes",
    "_ctypes",
    "_thread",
    "gc",
    "atexit",
    "faulthandler",
    "marshal",
    "__main__",
];

fn clip(s: &str) -> String {
    s.chars().take(60).collect()
}

/// The capability of a resolved dotted path, if any.
pub fn classify_path(path: &str) -> Option<Capability> {
    let root = path.split('.').next().unwrap_or(path);
    if let Some((_, k)) = MODULE_KINDS.iter().find(|(m, _)| *m == root) {
        return Some(*k);
    }
    if let Some((_, k)) = PATH_KINDS
        .iter()
        .find(|(p, _)| path == *p || path.starts_with(&format!("{p}.")))
    {
        return Some(*k);
    }
    if let Some(rest) = path
        .strip_prefix("os.environ.")
        .or_else(|| path.strip_prefix("os.environb."))
        .or_else(|| path.strip_prefix("posix.environ."))
    {
        let key = rest.to_ascii_uppercase();
        if key.starts_with("PYTEST")
            || key.starts_with("PL_")
            || key.starts_with("PATCHLOOP")
            || matches!(key.as_str(), "PYTHONPATH" | "CI" | "_" | "PWD")
        {
            return Some(Capability::TestContext);
        }
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
    super::policy::KNOWN_MODULES.contains(root) || MODULE_KINDS.iter().any(|(m, _)| *m == root)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> BTreeSet<Capability> {
        uses(src).into_iter().map(|u| u.capability).collect()
    }

    fn added(pre: &str, post: &str) -> BTreeSet<Capability> {
        added_capabilities("m.py", Some(pre), post)
            .into_iter()
            .map(|f| f.capability)
            .collect()
    }

    use Capability as C;

    #[test]
    fn aliases_and_strings_resolve() {
        for (src, want) in [
            ("import sys as s\ns.settrace(f)\n", C::Tracing),
            ("import sys\nm = sys\nm.setprofile(f)\n", C::Tracing),
            ("from sys import settrace as st\nst(f)\n", C::Tracing),
            (
                "getattr(__import__('sy' + 's'), 'set' 'trace')(f)\n",
                C::Tracing,
            ),
            (
                "import importlib\nu = importlib.import_module('unit' + 'test')\n",
                C::TestFramework,
            ),
            (
                "x = getattr(__import__('unit'+'test'), 'Test'+'Case')\n",
                C::TestFramework,
            ),
            (
                "import sys\nsys.modules['unit' + 'test'].TestCase.run = None\n",
                C::TestFramework,
            ),
            ("import sys\nsys.addaudithook(h)\n", C::AuditHook),
            ("import gc as g\ng.callbacks.append(cb)\n", C::Gc),
            (
                "import sys\nsys.meta_path.insert(0, L())\n",
                C::ImportSystem,
            ),
            (
                "import inspect\nf = inspect.currentframe().f_back\n",
                C::Frames,
            ),
            (
                "def f(): raise E\ntry: f()\nexcept E as e: e.__traceback__.tb_frame\n",
                C::Frames,
            ),
            (
                "def g(): pass\ng.__code__ = h.__code__\n",
                C::IdentityMutation,
            ),
            ("o.__class__ = Other\n", C::IdentityMutation),
            ("setattr(fn, '__co' + 'de__', c)\n", C::IdentityMutation),
            (
                "import builtins\nbuiltins.__build_class__ = b\n",
                C::Builtins,
            ),
            ("__builtins__['len'] = f\n", C::Builtins),
            ("import ctypes\n", C::Native),
            (
                "import threading\nthreading.Timer(1, f).start()\n",
                C::Threads,
            ),
            (
                "from threading import Thread as T\nT(target=f).start()\n",
                C::Threads,
            ),
            (
                "import os\nif os.environ.get('PYTEST_CURRENT_TEST'): pass\n",
                C::TestContext,
            ),
            (
                "import os\nos.getenv('PYTEST_' + 'CURRENT_TEST')\n",
                C::TestContext,
            ),
            (
                "import os\nany(k.startswith(p) for k in os.environ)\n",
                C::EnvironmentScan,
            ),
            ("import atexit\natexit.register(f)\n", C::ProcessHook),
            ("import weakref\nweakref.finalize(o, f)\n", C::ProcessHook),
            (
                "class A:\n    def __init_subclass__(cls): pass\n",
                C::ClassHook,
            ),
            ("exec('x = 1')\n", C::DynamicCode),
            ("c = compile(src, p, 'exec', optimize=2)\n", C::DynamicCode),
            (
                "import importlib\nimportlib.import_module(name)\n",
                C::DynamicImport,
            ),
            ("import sys\ngetattr(sys, n)\n", C::DynamicAttribute),
            ("import json\njson.loads = lambda s: {}\n", C::Monkeypatch),
            ("import os\ngetattr(os, '_e' + 'xit')(0)\n", C::ProcessExit),
            ("pytest_plugins = ['textkit.plug']\n", C::TestFramework),
            (
                "import sys\nsys.modules['tests.test_calc'].pytest_plugins = ['x']\n",
                C::TestFramework,
            ),
            (
                "import sys\nsys.modules['pl_guard'].check = lambda: None\n",
                C::Harness,
            ),
            ("open('/tmp/pl-x/junit.xml', 'w')\n", C::Harness),
            (
                "import traceback\nany('tests/' in f.filename for f in traceback.extract_stack())\n",
                C::Frames,
            ),
            (
                "x = ''.join(['un', 'ittest'])\nimport importlib\n",
                C::TestFramework,
            ),
            (
                "class Obs:\n    def __del__(self): rewrite()\n",
                C::ProcessHook,
            ),
            ("import os as o\no._exit(0)\n", C::ProcessExit),
        ] {
            assert!(
                kinds(src).contains(&want),
                "{src:?}: want {want}, got {:?}",
                kinds(src)
            );
        }
    }

    #[test]
    fn ordinary_code_has_no_capabilities() {
        for src in [
            "import re\n\ndef slug(s):\n    return re.sub('[^a-z]+', '-', s.lower()).strip('-')\n",
            "import os\nHOME = os.environ.get('HOME', '/')\nos.path.join(HOME, 'x')\n",
            "import operator\ngetattr(operator, name)(1, 2)\n",
            "from collections import OrderedDict\nclass C:\n    def __init__(self):\n        self.d = OrderedDict()\n        setattr(self, 'x', 1)\n        getattr(self, name)\n",
            "from re import compile\nPAT = compile('a+')\n",
            "import re\nPAT = re.compile('a+')\nx = dict(eval=1)\n",
            "import threading\nLOCK = threading.Lock()\n",
            "import functools\n@functools.lru_cache\ndef f(x):\n    \"\"\"Test with pytest.\"\"\"\n    return x\n",
            "import sys\nif sys.version_info < (3, 8):\n    pass\nsys.path.insert(0, 'x')\n",
            "import abc\nclass Shape(metaclass=abc.ABCMeta):\n    @abc.abstractmethod\n    def area(self): ...\n",
            "from abc import ABCMeta as M\nclass Shape(metaclass=M):\n    pass\n",
        ] {
            assert!(kinds(src).is_empty(), "{src:?}: {:?}", uses(src));
        }
    }

    #[test]
    fn a_metaclass_other_than_abcmeta_is_a_class_hook() {
        assert!(
            kinds("class M(type):\n    pass\nclass K(metaclass=M):\n    pass\n")
                .contains(&C::ClassHook)
        );
        assert!(kinds("import abc\nclass K(metaclass=abc.ABCMeta):\n    pass\n").is_empty());
    }

    #[test]
    fn only_new_kinds_count() {
        let base = "import inspect\n\ndef caller():\n    return inspect.stack()[1].function\n";
        // More frame inspection in a file that already inspects frames: nothing new.
        let fix = "import inspect\n\ndef caller():\n    f = inspect.currentframe().f_back\n    return f.f_code.co_name\n";
        assert_eq!(added(base, fix), BTreeSet::from([C::CodeObject]));
        assert!(
            added(
                base,
                "import inspect\n\ndef caller():\n    return inspect.stack()[2].function\n"
            )
            .is_empty()
        );
        // The same file gains tracing: that kind is new.
        let evil = format!("{base}import sys\nsys.settrace(lambda *a: None)\n");
        assert_eq!(added(base, &evil), BTreeSet::from([C::Tracing]));
        // A new file: everything counts.
        let f = added_capabilities("n.py", None, "import gc\n");
        assert_eq!(f.len(), 1);
        assert_eq!((f[0].line, f[0].capability), (1, C::Gc));
    }

    #[test]
    fn syntax_errors_count_only_when_new() {
        assert!(added("def f(:\n", "def f(:\n    pass\n").is_empty());
        assert_eq!(added("x = 1\n", "x = (\n"), BTreeSet::from([C::Unparsable]));
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        let src = format!("x = {}1{}\n", "(".repeat(3000), ")".repeat(3000));
        let _ = uses(&src);
    }
}
