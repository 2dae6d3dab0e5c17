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

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use serde::Serialize;

mod classify;
mod scanner;

pub use classify::classify_path;
pub use scanner::uses;

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

#[cfg(test)]
mod tests;
