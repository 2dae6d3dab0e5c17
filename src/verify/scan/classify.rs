//! What each module, dotted path, attribute and string stands for: the tables a resolved use
//! is classified by, apart from the walk that resolves it.

use super::Capability;

/// Modules whose every use is a capability.
pub(super) const MODULE_KINDS: &[(&str, Capability)] = &[
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
pub(super) const ATTR_KINDS: &[(&str, Capability)] = &[
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
pub(super) const IDENTITY_ATTRS: &[&str] = &[
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
pub(super) const DEF_KINDS: &[(&str, Capability)] = &[
    ("__init_subclass__", Capability::ClassHook),
    ("__set_name__", Capability::ClassHook),
    ("__del__", Capability::ProcessHook),
];

/// Names a string constant may spell to reach a capability by `getattr`/`vars()[...]`.
pub(super) fn string_kind(s: &str) -> Option<(Capability, String)> {
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
