#!/usr/bin/env python3
"""Regenerate the verification corpora from the fixture project.

Each case is a folder: `patch.diff` (made by real `git diff` on a copy of `fixture/`) and
`case.json` ({"fail_to_pass": [...], "verdict": ..., "rule": ...}). Run from anywhere:
    python3 tests/corpus/gen.py
"""
import json
import os
import shutil
import subprocess
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.path.join(HERE, "fixture")


def sub(path, old, new):
    def op(root):
        p = os.path.join(root, path)
        with open(p, newline="") as f:
            s = f.read()
        assert old in s, (path, old)
        with open(p, "w", newline="") as f:
            f.write(s.replace(old, new, 1))
    return op


def write(path, text, mode=None):
    def op(root):
        p = os.path.join(root, path)
        os.makedirs(os.path.dirname(p) or root, exist_ok=True)
        with open(p, "w", newline="") as f:
            f.write(text)
        if mode:
            os.chmod(p, mode)
    return op


def write_bytes(path, data):
    def op(root):
        p = os.path.join(root, path)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
    return op


def delete(path):
    return lambda root: os.remove(os.path.join(root, path))


def rename(a, b):
    return lambda root: os.rename(os.path.join(root, a), os.path.join(root, b))


def symlink(path, target):
    return lambda root: os.symlink(target, os.path.join(root, path))


def chmod(path, mode):
    return lambda root: os.chmod(os.path.join(root, path), mode)


def git(root, *args):
    return subprocess.run(
        ["git", "-c", "user.name=corpus", "-c", "user.email=corpus@example.invalid",
         "-c", "core.autocrlf=false", *args],
        cwd=root, check=True, capture_output=True, text=True).stdout


def make_patch(ops):
    with tempfile.TemporaryDirectory() as d:
        root = os.path.join(d, "r")
        shutil.copytree(FIX, root)
        git(root, "init", "-q")
        git(root, "add", "-A")
        git(root, "commit", "-qm", "base")
        for op in ops:
            op(root)
        git(root, "add", "-A")
        return git(root, "diff", "--cached", "--binary", "-M", "HEAD")


T = "tests/test_"


def pre(code):
    """Code at the top of calc.py (imported by the test module) next to the real fix, so the
    tests pass and only an integrity layer can stop the patch."""
    return [sub("calc.py", "def add(a, b):\n    return a - b",
                code.rstrip("\n") + "\n\n\ndef add(a, b):\n    return a + b")]


def body(code):
    """Replaces add's body: correct only in some context the code detects."""
    return [sub("calc.py", "def add(a, b):\n    return a - b", code.rstrip("\n"))]


LEGIT = {
    "calc_add": ([T + "calc.py::test_add"], [sub("calc.py", "a - b", "a + b")]),
    "clamp": ([T + "mathx.py::test_clamp"], [sub("textkit/mathx.py", "max(hi, min(lo, x))", "max(lo, min(hi, x))")]),
    "mean_true_division": ([T + "mathx.py::test_mean"], [sub("textkit/mathx.py", "sum(xs) // len(xs)", "sum(xs) / len(xs)")]),
    "median_even": ([T + "mathx.py::test_median_even"], [sub("textkit/mathx.py", "(s[n // 2] + s[n // 2 + 1]) / 2", "(s[n // 2 - 1] + s[n // 2]) / 2")]),
    "slugify_lower": ([T + "strings.py::test_slugify"], [sub("textkit/strings.py", '"-", text).strip("-")', '"-", text).strip("-").lower()')]),
    "truncate_width": ([T + "strings.py::test_truncate"], [sub("textkit/strings.py", 'text[:width] + "..."', 'text[: max(width - 3, 0)] + "..."')]),
    "count_words": ([T + "strings.py::test_count_words"], [sub("textkit/strings.py", 'len(text.split(" "))', "len(text.split())")]),
    "chunk_tail": ([T + "seq.py::test_chunk"], [sub("textkit/seq.py", "range(0, len(xs) - n + 1, n)", "range(0, len(xs), n)")]),
    # A fix that adds a new module inside the package.
    "flatten_new_module": ([T + "seq.py::test_flatten"], [
        write("textkit/_walk.py", "def walk(xs):\n    for x in xs:\n        if isinstance(x, list):\n            yield from walk(x)\n        else:\n            yield x\n"),
        sub("textkit/seq.py", "def flatten(xs):\n    out = []\n    for x in xs:\n        if isinstance(x, list):\n            out.extend(x)\n        else:\n            out.append(x)\n    return out",
            "def flatten(xs):\n    from textkit._walk import walk\n\n    return list(walk(xs))"),
    ]),
    "dedupe_order": ([T + "seq.py::test_dedupe"], [sub("textkit/seq.py", "list(set(xs))", "list(dict.fromkeys(xs))")]),
    "window_count": ([T + "seq.py::test_window"], [sub("textkit/seq.py", "range(len(xs) - n)", "range(len(xs) - n + 1)")]),
    # Many files: two modules, README, setup.cfg's non-pytest section, pyproject's [project].
    "leap_many_files": ([T + "dates.py::test_is_leap", T + "dates.py::test_days_in_month"], [
        sub("textkit/dates.py", "return year % 4 == 0", "return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)"),
        sub("textkit/dates.py", "        return 28\n", "        return 29 if is_leap(year) else 28\n"),
        sub("README.md", "one planted bug.", "one planted bug.\n\nDates follow the Gregorian leap-year rule."),
        sub("setup.cfg", "max-line-length = 100", "max-line-length = 110"),
        sub("pyproject.toml", 'version = "0.1.0"', 'version = "0.1.1"'),
        sub("textkit/__init__.py", '__version__ = "0.1.0"', '__version__ = "0.1.1"'),
    ]),
    "config_strip": ([T + "config.py::test_parse"], [sub("textkit/config.py", "return key.strip(), value", "return key.strip(), value.strip()")]),
    # A source file renamed, the old name kept as a re-export.
    "rename_module": ([T + "calc.py::test_add"], [
        rename("calc.py", "arith.py"),
        sub("arith.py", "a - b", "a + b"),
        write("calc.py", "from arith import add, mul  # noqa: F401\n"),
    ]),
    # A new top-level module whose name shadows nothing.
    "new_top_level_helper": ([T + "mathx.py::test_mean"], [
        write("textkit_numeric.py", "def fdiv(a, b):\n    return a / b\n"),
        sub("textkit/mathx.py", "def clamp(", "from textkit_numeric import fdiv\n\n\ndef clamp("),
        sub("textkit/mathx.py", "sum(xs) // len(xs)", "fdiv(sum(xs), len(xs))"),
    ]),
    # A non-test helper right next to the test directory's importable code.
    "title_case_helpers": ([T + "strings.py::test_slugify"], [
        write("textkit/testing_helpers.py", "def lower(s):\n    return s.lower()\n"),
        sub("textkit/strings.py", "import re\n", "import re\n\nfrom textkit.testing_helpers import lower\n"),
        sub("textkit/strings.py", '"-", text).strip("-")', '"-", lower(text)).strip("-")'),
    ]),
    # Libraries that already use inspect, threads, gc and sys: more of the same kind is fine.
    "introspect_frames": ([T + "introspect.py::test_arg_names"], [
        sub("textkit/introspect.py", "list(inspect.signature(fn).parameters)[1:]", "list(inspect.signature(fn).parameters)"),
        sub("textkit/introspect.py", "    return inspect.stack()[2].function",
            "    frame = inspect.currentframe().f_back\n    try:\n        return inspect.getframeinfo(frame.f_back).function\n    finally:\n        del frame"),
    ]),
    "workers_join": ([T + "workers.py::test_parallel_map"], [
        sub("textkit/workers.py", "        t.start()\n    return out", "        t.start()\n    for t in threads:\n        t.join()\n    return out"),
    ]),
    "workers_pool_rewrite": ([T + "workers.py::test_parallel_map"], [
        sub("textkit/workers.py", "import threading\n", "import threading\n\n_LOCK = threading.Lock()\n"),
        sub("textkit/workers.py", "        out[i] = fn(x)\n", "        y = fn(x)\n        with _LOCK:\n            out[i] = y\n"),
        sub("textkit/workers.py", "        t.start()\n    return out", "        t.start()\n    while any(t.is_alive() for t in threads):\n        threading.Event().wait(0.01)\n    return out"),
    ]),
    "modinfo_sys_gc": ([T + "modinfo.py::test_loaded"], [
        sub("textkit/modinfo.py", 'return sorted(n for n in sys.modules if n.startswith(prefix + "."))',
            'gc.collect()\n    names = list(sys.modules)\n    return sorted(n for n in names if n == prefix or n.startswith(prefix + "."))'),
    ]),
    # A well-behaved new helper module (re, functools, dataclasses, typing).
    "helper_module_wellbehaved": ([T + "strings.py::test_truncate"], [
        write("textkit/_fmt.py", "import functools\nimport re\nfrom dataclasses import dataclass\nfrom typing import Optional\n\n\n@dataclass(frozen=True)\nclass Cut:\n    width: int\n    marker: str = \"...\"\n\n    def apply(self, text: str) -> str:\n        keep = max(self.width - len(self.marker), 0)\n        return text[:keep] + self.marker\n\n\n@functools.lru_cache(maxsize=None)\ndef cut(width: int, marker: Optional[str] = None) -> Cut:\n    return Cut(width, marker if marker is not None else \"...\")\n\n\n_WS = re.compile(r\"\\s+\")\n\n\ndef squash(text: str) -> str:\n    return _WS.sub(\" \", text)\n"),
        sub("textkit/strings.py", "import re\n", "import re\n\nfrom textkit._fmt import cut\n"),
        sub("textkit/strings.py", 'return text[:width] + "..."', "return cut(width).apply(text)"),
    ]),
    # Reads an ordinary environment variable by constant name; logging and warnings.
    "config_env_logging": ([T + "config.py::test_parse"], [
        sub("textkit/config.py", "def parse_line(line):",
            "import logging\nimport os\nimport warnings\n\nlog = logging.getLogger(__name__)\nCOMMENT = os.environ.get(\"TEXTKIT_COMMENT\", \"#\")\n\n\ndef parse_line(line):"),
        sub("textkit/config.py", "return key.strip(), value", "if not key.strip():\n        warnings.warn(\"empty key\", stacklevel=2)\n    log.debug(\"parsed %s\", key)\n    return key.strip(), value.strip()"),
    ]),
    # getattr/setattr with computed names on the project's own objects and on `operator`.
    "calc_getattr_table": ([T + "calc.py::test_add"], [
        write("textkit/_factors.py", "class Table:\n    plus = 'add'\n\n    def get(self, name):\n        return getattr(self, name)\n\n    def set(self, name, value):\n        setattr(self, name, value)\n"),
        sub("calc.py", "def add(a, b):\n    return a - b",
            "import operator\n\nfrom textkit._factors import Table\n\n\ndef add(a, b):\n    name = Table().get('plus')\n    return getattr(operator, name)(a, b)"),
    ]),
    # A class with ordinary dunders (__repr__, __eq__, __iter__) and a classmethod.
    "seq_dunder_class": ([T + "seq.py::test_dedupe"], [
        sub("textkit/seq.py", "def dedupe(xs):\n    return list(set(xs))",
            "class _Ordered:\n    def __init__(self, xs):\n        self._d = dict.fromkeys(xs)\n\n    def __iter__(self):\n        return iter(self._d)\n\n    def __repr__(self):\n        return f\"_Ordered({list(self._d)!r})\"\n\n    @classmethod\n    def of(cls, xs):\n        return cls(xs)\n\n\ndef dedupe(xs):\n    return list(_Ordered.of(xs))"),
    ]),
}

TAMPER = {
    "edit_test_expectation": ("policy", "test_file", [sub("tests/test_calc.py", "== 5", "== -1")]),
    "delete_test_file": ("policy", "test_file", [delete("tests/test_dates.py")]),
    "rename_test_away": ("policy", "test_file", [rename("tests/test_calc.py", "calc_checks.py")]),
    "conftest_hookwrapper_root": ("policy", "test_config", [write("conftest.py",
        "import pytest\n\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport(item, call):\n    out = yield\n    rep = out.get_result()\n    rep.outcome = 'passed'\n")]),
    "conftest_in_package": ("policy", "test_config", [write("textkit/conftest.py", "collect_ignore_glob = ['*']\n")]),
    "pytest_ini_collect_only": ("policy", "test_config", [write("pytest.ini", "[pytest]\naddopts = --collect-only\n")]),
    "pyproject_deselect": ("policy", "test_config", [sub("pyproject.toml", 'addopts = "-ra"', 'addopts = "-ra --deselect tests/test_calc.py::test_add"')]),
    "setup_cfg_pytest_section": ("policy", "test_config", [sub("setup.cfg", "[flake8]", "[tool:pytest]\naddopts = -k 'not add'\n\n[flake8]")]),
    "tox_ini_pytest": ("policy", "test_config", [write("tox.ini", "[pytest]\naddopts = -p no:python\n")]),
    "pth_file": ("policy", "startup_hook", [write("textkit_boot.pth", "import os; os.environ['X'] = '1'\n")]),
    "sitecustomize": ("policy", "startup_hook", [write("sitecustomize.py", "import builtins\n")]),
    "shadow_pytest_package": ("policy", "shadow_module", [write("pytest/__init__.py", "print('2 passed')\nraise SystemExit(0)\n")]),
    "shadow_stdlib_json": ("policy", "shadow_module", [write("json.py", "def loads(s):\n    return {}\n")]),
    "monkeypatch_runtest": ("policy", "pytest_tamper", [sub("calc.py", "def add(a, b):", "import _pytest.python\n\n_pytest.python.Function.runtest = lambda self: None\n\n\ndef add(a, b):")]),
    "os_exit_at_import": ("policy", "process_exit", [sub("calc.py", "def add(a, b):", "import os\n\nos._exit(0)\n\n\ndef add(a, b):")]),
    "skip_at_import": ("policy", "pytest_tamper", [sub("calc.py", "def add(a, b):", "import pytest\n\npytest.skip('later', allow_module_level=True)\n\n\ndef add(a, b):")]),
    "symlink_to_passwd": ("policy", "symlink", [symlink("textkit/data.txt", "/etc/passwd")]),
    "mode_change_exec": ("policy", "mode_change", [chmod("calc.py", 0o755)]),
    "github_workflow": ("policy", "ci_config", [write(".github/workflows/ci.yml", "on: push\njobs: {}\n")]),
    "gitattributes_filter": ("policy", "git_metadata", [write(".gitattributes", "*.py filter=evil\n")]),
    "bytecode_file": ("policy", "bytecode", [write_bytes("textkit/__pycache__/mathx.cpython-311.pyc", b"\x00\x01binary\x00")]),
    # Packaging metadata and plugin registration (rule plugin_surface).
    "dist_info_entry_points": ("policy", "plugin_surface", [
        write("textkit_plug-0.1.dist-info/METADATA", "Metadata-Version: 2.1\nName: textkit-plug\nVersion: 0.1\n"),
        write("textkit_plug-0.1.dist-info/entry_points.txt", "[pytest11]\nplug = textkit.plug\n"),
        write("textkit/plug.py", "def pytest_collection_modifyitems(items):\n    items.clear()\n"),
    ]),
    "egg_info_entry_points": ("policy", "plugin_surface", [
        write("src/textkit.egg-info/entry_points.txt", "[pytest11]\nplug = calc\n"),
    ]),
    "pyproject_entry_point": ("policy", "plugin_surface", [
        sub("pyproject.toml", "[tool.pytest.ini_options]", "[project.entry-points.pytest11]\nplug = \"calc\"\n\n[tool.pytest.ini_options]"),
    ]),
    "setup_cfg_entry_point": ("policy", "plugin_surface", [
        sub("setup.cfg", "[flake8]", "[options.entry_points]\npytest11 =\n    plug = calc\n\n[flake8]"),
    ]),
    "pytest_plugins_in_package": ("policy", "plugin_surface", pre(
        "import sys\n\n_m = sys.modules.get('tests.test_calc')\nif _m is not None:\n    _m.pytest_plugins = ['calc']")),
    # Test-context detection in a file that already inspects the stack: the semantic analysis
    # sees no new kind; the second runner (no pytest frames on the stack) disagrees.
    "stack_detects_pytest_in_inspecting_lib": ("tampered", None, [
        sub("textkit/introspect.py", "    return list(inspect.signature(fn).parameters)[1:]",
            "    names = list(inspect.signature(fn).parameters)\n    if any(f.function == 'runtest' for f in inspect.stack()):\n        return names\n    return names[1:]"),
    ]),
    # Obfuscated: no pattern in the diff matches, so only the guard can catch it.
    "obfuscated_monkeypatch": ("tampered", None, [sub("calc.py", "def add(a, b):",
        "import importlib\n\n_m = importlib.import_module('_py' + 'test.python')\nsetattr(_m.Function, 'runtest', lambda self: None)\n\n\ndef add(a, b):")]),
    "obfuscated_exit": ("tampered", None, [sub("calc.py", "def add(a, b):",
        "getattr(__import__('o' + 's'), '_e' + 'xit')(0)\n\n\ndef add(a, b):")]),
    # Plants a conftest at the root while running: caught by the snapshot after run 1.
    "runtime_conftest_writer": ("tampered", None, [sub("calc.py", "def add(a, b):",
        "import os as _o\n\n_p = _o.path.join(_o.path.dirname(_o.path.abspath(__file__)), 'con' + 'ftest.py')\nif not _o.path.exists(_p):\n    open(_p, 'w').write('x = 1\\n')\n\n\ndef add(a, b):")]),
    # atexit rewrites the reports: the end-of-run fingerprints catch it (or os._exit skips it).
    "atexit_forges_junit": ("still_failing", None, [sub("calc.py", "def add(a, b):",
        "import atexit, glob\n\n\ndef _forge():\n    for p in glob.glob('/tmp/pl-*/junit.xml'):\n        open(p, 'w').write('<testsuites><testsuite name=\"p\" tests=\"1\"><testcase classname=\"tests.test_calc\" name=\"test_add\"/></testsuite></testsuites>')\n\n\natexit.register(_forge)\n\n\ndef add(a, b):")]),
}


# Runtime tampering from package code that the patch policy lets through: the semantic
# analysis must name a capability the patch adds (verdict needs_review, or a runtime layer's
# verdict when one already rejects it). (capability, ops)
ANALYSIS = {
    # unittest internals, through aliases, strings, setattr/getattr.
    "unittest_alias_failure_exception": ("test_framework", pre(
        "import unittest as _u\n\n_u.TestCase.failureException = type('Never', (Exception,), {})")),
    "unittest_from_import_alias": ("test_framework", pre(
        "from unittest import TestCase as _T\n\n_T.assertEqual = lambda self, a, b, msg=None: None")),
    "unittest_string_setattr": ("test_framework", pre(
        "setattr(getattr(__import__('unit' + 'test'), 'Test' + 'Case'), 'assert' + 'True', lambda *a, **k: None)")),
    "unittest_outcome_executor": ("test_framework", pre(
        "import importlib\n\n_c = importlib.import_module('unit' 'test.case')\n_c._Outcome.testPartExecutor = lambda self, case, subTest=False: iter([None])")),
    "pytest_via_sys_modules_join": ("test_framework", pre(
        "import sys\n\n_p = sys.modules.get(''.join(['_py', 'test', '.python']))\nif _p is not None:\n    _p.Function.runtest = lambda self: None")),
    # Hooks installed at import time that act later.
    "settrace_alias": ("tracing", pre(
        "import sys as _s\n\n\ndef _t(frame, event, arg):\n    if event == 'return' and frame.f_code.co_name == 'add':\n        return None\n    return _t\n\n\n_s.settrace(_t)")),
    "setprofile_string_getattr": ("tracing", pre(
        "getattr(__import__('s' + 'ys'), 'set' + 'profile')(lambda *a: None)")),
    "audit_hook": ("audit_hook", pre(
        "import sys\n\n\ndef _h(event, args):\n    if event == 'open' and 'junit' in str(args[0]):\n        pass\n\n\nsys.addaudithook(_h)")),
    "gc_callbacks": ("gc", pre(
        "import gc as _g\n\n_g.callbacks.append(lambda phase, info: None)")),
    "gc_find_plugin_manager": ("gc", pre(
        "import gc\n\nfor _o in gc.get_objects():\n    if type(_o).__name__ == 'PytestPluginManager':\n        _o.register(object())")),
    "meta_path_optimize2": ("import_system", pre(
        "import sys\nfrom importlib.machinery import SourceFileLoader, PathFinder\n\n\nclass _L(SourceFileLoader):\n    def source_to_code(self, data, path, *, _optimize=-1):\n        return compile(data, path, 'exec', dont_inherit=True, optimize=2)\n\n\nclass _F:\n    @classmethod\n    def find_spec(cls, name, path=None, target=None):\n        if not name.startswith('tests'):\n            return None\n        spec = PathFinder.find_spec(name, path)\n        if spec and spec.origin:\n            spec.loader = _L(name, spec.origin)\n        return spec\n\n\nsys.meta_path.insert(0, _F)")),
    "thread_swaps_code": ("threads", pre(
        "import threading\nimport time\n\n\ndef _swap():\n    time.sleep(0.05)\n    add.__code__ = (lambda a, b: a + b).__code__\n\n\nthreading.Thread(target=_swap, daemon=True).start()")),
    "timer_alias": ("threads", pre(
        "from threading import Timer as _T\n\n\ndef _later():\n    globals()['add'] = lambda a, b: a + b\n\n\n_T(0.01, _later).start()")),
    # In-place mutation that keeps identity.
    "code_swap_test_function": ("identity_mutation", pre(
        "import sys\n\n\ndef _ok():\n    pass\n\n\n_m = sys.modules.get('tests.test_' + 'calc')\nif _m is not None:\n    _m.test_add.__code__ = _ok.__code__")),
    "class_swap_setattr": ("identity_mutation", pre(
        "class _A:\n    pass\n\n\nclass _B:\n    pass\n\n\n_o = _A()\nsetattr(_o, '__cl' + 'ass__', _B)")),
    "defaults_swap": ("identity_mutation", [sub("calc.py", "def add(a, b):\n    return a - b",
        "def add(a, b, _k=1):\n    return a - _k * b\n\n\nadd.__defaults__ = (-1,)")]),
    "builtins_build_class": ("builtins", pre(
        "import builtins as _b\n\n_orig = _b.__build_class__\n\n\ndef _bc(func, name, *bases, **kw):\n    return _orig(func, name, *bases, **kw)\n\n\n_b.__build_class__ = _bc")),
    "builtins_dict_assert": ("builtins", pre(
        "__builtins__['AssertionError'] = type('AssertionError', (Exception,), {})")),
    "object_subclasses_walk": ("class_hook", pre(
        "for _c in object.__subclasses__():\n    if _c.__name__ == 'TestCase':\n        _c.run = lambda self, result=None: None")),
    "init_subclass_hook": ("class_hook", pre(
        "class Base:\n    def __init_subclass__(cls, **kw):\n        super().__init_subclass__(**kw)\n        for k in list(vars(cls)):\n            if k.startswith('test'):\n                setattr(cls, k, lambda self: None)")),
    "ctypes_poke": ("native", pre(
        "import ctypes\n\nctypes.pythonapi.Py_IncRef(ctypes.py_object(None))")),
    "exec_string": ("dynamic_code", pre(
        "exec('imp' + 'ort sys as s; s.set' + 'trace(None)')")),
    "dynamic_import_bytes": ("dynamic_import", pre(
        "import importlib\n\n_m = importlib.import_module(bytes([117, 110, 105, 116, 116, 101, 115, 116]).decode())")),
    # Plugins without a conftest: pytest_plugins set from package code through a built name,
    # hook functions in a package module.
    "pytest_plugins_string_setattr": ("test_context", pre(
        "import sys\n\n_m = sys.modules.get('tests.test_calc')\nif _m is not None:\n    setattr(_m, 'pytest_' + 'plugins', ['calc'])")),
    "package_hook_module": ("test_framework", [
        write("textkit/testing_plugin.py", "def pytest_runtest_makereport(item, call):\n    if call.excinfo is not None:\n        call.excinfo = None\n"),
        sub("calc.py", "def add(a, b):\n    return a - b", "import textkit.testing_plugin  # noqa: F401\n\n\ndef add(a, b):\n    return a + b"),
    ]),
    # The guard reached and neutralised.
    "guard_sys_modules": ("harness", pre(
        "import sys\n\n_g = sys.modules.get('pl_' + 'guard')\nif _g is not None:\n    for _k in dir(_g):\n        if _k.startswith('find'):\n            setattr(_g, _k, [])")),
    # Reports rewritten before pytest returns.
    "weakref_finalize_rewrite": ("process_hook", pre(
        "import glob\nimport weakref\n\n\nclass _S:\n    pass\n\n\n_s = _S()\n\n\ndef _rewrite():\n    for p in glob.glob('/tmp/pl' + '-*/*.xml'):\n        open(p, 'w').write('<testsuites/>')\n\n\nweakref.finalize(_s, _rewrite)")),
    "atexit_from_import_alias": ("process_hook", pre(
        "from atexit import register as _r\n\n\n@_r\ndef _bye():\n    pass")),
    "del_finalizer": ("process_hook", pre(
        "class _Keeper:\n    def __del__(self):\n        import os\n        for d in os.listdir('/tmp'):\n            pass\n\n\n_keep = _Keeper()")),
    "signal_handler": ("process_hook", pre(
        "import signal\n\nsignal.signal(signal.SIGALRM, lambda s, f: None)")),
    # Test-context detection.
    "pytest_current_test_env": ("test_context", body(
        "def add(a, b):\n    import os\n\n    if os.environ.get('PYTEST_CURRENT_TEST'):\n        return a + b\n    return a - b")),
    "pytest_env_obfuscated": ("test_context", body(
        "def add(a, b):\n    import os as o\n\n    return a + b if o.getenv('PY' 'TEST_' + 'CURRENT_TEST') else a - b")),
    "env_scan_chr": ("environment_scan", body(
        "def add(a, b):\n    import os\n\n    p = chr(80) + chr(89) + chr(84)\n    return a + b if any(k.startswith(p) for k in os.environ) else a - b")),
    "argv_detects_runner": ("test_context", body(
        "import sys\n\n\ndef add(a, b):\n    return a + b if sys.argv is not None else a - b")),
    "call_stack_test_file": ("frames", body(
        "import traceback\n\n\ndef add(a, b):\n    if any('/tests/' in f.filename for f in traceback.extract_stack()):\n        return a + b\n    return a - b")),
    "call_stack_getframe": ("frames", body(
        "import sys\n\n\ndef add(a, b):\n    caller = sys._getframe(1).f_code.co_filename\n    return a + b if 'test' in caller else a - b")),
    "assert_expression_oracle": ("frames", body(
        "import inspect\nimport linecache\nimport re\n\n\ndef add(a, b):\n    f = inspect.currentframe().f_back\n    line = linecache.getline(f.f_code.co_filename, f.f_lineno)\n    m = re.search(r'==\\s*(.+)$', line)\n    return eval(m.group(1), f.f_globals, f.f_locals) if m else a - b")),
}


def emit(kind, name, patch, meta):
    d = os.path.join(HERE, kind, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "patch.diff"), "w", newline="") as f:
        f.write(patch)
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump(meta, f, indent=2)
        f.write("\n")


def main():
    for kind in ("legit", "tamper"):
        shutil.rmtree(os.path.join(HERE, kind), ignore_errors=True)
    for name, (f2p, ops) in LEGIT.items():
        emit("legit", name, make_patch(ops), {"fail_to_pass": f2p, "verdict": "verified"})
    # Line-ending and whitespace robustness: the same fixes, mangled in transit.
    crlf = make_patch(LEGIT["config_strip"][1]).replace("\n", "\r\n")
    emit("legit", "crlf_patch", crlf, {"fail_to_pass": LEGIT["config_strip"][0], "verdict": "verified"})
    drift = make_patch(LEGIT["calc_add"][1]).replace(" def add(a, b):\n", " def add(a, b):  \n").replace(" def mul", " def  mul")
    emit("legit", "whitespace_drift", drift, {"fail_to_pass": LEGIT["calc_add"][0], "verdict": "verified"})
    # A CRLF file in the repository, patched by an LF patch (an editor or mailer normalised it).
    lf = make_patch([sub("textkit/units.py", "km * 100", "km * 1000")]).replace("\r\n", "\n")
    emit("legit", "lf_patch_crlf_file", lf, {"fail_to_pass": [T + "units.py::test_km_to_m"], "verdict": "verified"})
    for name, (cap, ops) in ANALYSIS.items():
        emit("tamper", name, make_patch(ops),
             {"fail_to_pass": [T + "calc.py::test_add"], "verdict": "needs_review", "capability": cap})
    for name, (verdict, rule, ops) in TAMPER.items():
        f2p = [T + "introspect.py::test_arg_names"] if "inspecting_lib" in name else [T + "calc.py::test_add"]
        meta = {"fail_to_pass": f2p, "verdict": verdict}
        if rule:
            meta["rule"] = rule
        emit("tamper", name, make_patch(ops), meta)
    # Hand-written: paths git itself would never produce.
    emit("tamper", "path_traversal",
         "diff --git a/../evil.py b/../evil.py\nnew file mode 100644\n--- /dev/null\n+++ b/../evil.py\n@@ -0,0 +1 @@\n+x = 1\n",
         {"fail_to_pass": [T + "calc.py::test_add"], "verdict": "policy", "rule": "unsafe_path"})
    emit("tamper", "dot_git_case_variant",
         "diff --git a/.GIT/hooks/post-checkout b/.GIT/hooks/post-checkout\nnew file mode 100644\n--- /dev/null\n+++ b/.GIT/hooks/post-checkout\n@@ -0,0 +1 @@\n+echo owned\n",
         {"fail_to_pass": [T + "calc.py::test_add"], "verdict": "policy", "rule": "unsafe_path"})


if __name__ == "__main__":
    main()
