# patchloop's second, independent runner for the fail-to-pass tests. Executed as
# `python3 -I -B -c <pl_pytest.py + this file>` in a fresh process after the patched pytest runs; input is JSON
# on stdin: {"workspace", "paths": [abs], "ids": [...], "nonce"}. No pytest, no conftest, no
# plugins, PYTEST_* variables removed: code written to fool pytest (or this harness's pytest
# guard) meets a runner it did not see coming.
#   - `file.py::Class::test` where Class is a unittest.TestCase: plain unittest runs it.
#   - `file.py::test` / `file.py::Class::test` (plain class) with no parameters, no required
#     arguments (fixtures), no pytest marks, and no autouse fixture in a conftest of the tree or
#     in the test module: the module is imported by path and the function called.
#   - anything else (parametrized ids, fixtures, marks, pytest-only imports, nested classes, doctests,
#     generators/coroutines) is `not_applicable` with the reason: never a silent pass.
# Output: one line `@@PATCHLOOP-SECOND@@ <nonce> <json {id: {"outcome", "detail"}}>` written to
# a private copy of stdout taken before any project code runs; the process then os._exit()s.
import importlib.util
import inspect
import json
import os
import sys
import traceback
import unittest  # before any workspace directory leads sys.path (run_one puts one there)

_pl_seed_hashes()  # pl_pytest.py: the seed the pytest runs it is compared with have
_OUT = os.dup(1)
cfg = json.loads(sys.stdin.buffer.read())
sys.stdin = open(os.devnull)
for _k in [k for k in os.environ if k.startswith("PYTEST")]:
    del os.environ[_k]
ws = cfg["workspace"]
os.chdir(ws)


def split_id(node_id):
    """`::` splits only outside the [...] parameter part (same rule as verify::junit)."""
    file_end = node_id.find("::")
    if file_end < 0:
        return [node_id], ""
    b = node_id.find("[", file_end)
    head, params = (node_id, "") if b < 0 else (node_id[:b], node_id[b:])
    return head.split("::"), params


def autouse_in_conftests():
    for root, dirs, files in os.walk(ws):
        dirs[:] = [d for d in dirs if d not in (".git", "node_modules", "__pycache__")]
        if "conftest.py" in files:
            try:
                with open(os.path.join(root, "conftest.py"), encoding="utf-8", errors="replace") as f:
                    text = f.read()
                    # Fixtures and hooks that act on every test without being named by it.
                    if any(w in text for w in ("autouse", "pytest_configure", "pytest_sessionstart",
                                               "pytest_runtest_setup", "pytest_runtest_call")):
                        return os.path.relpath(os.path.join(root, "conftest.py"), ws)
            except OSError:
                pass
    return None


_own_autouse = {}


def own_autouse(path):
    if path not in _own_autouse:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                _own_autouse[path] = "autouse" in f.read()
        except OSError:
            _own_autouse[path] = False
    return _own_autouse[path]


def module_name(path):
    """pytest's `prepend` import mode: the first directory upwards without __init__.py is the
    base, inserted at the front of sys.path; the module name is dotted from there."""
    d, base = os.path.split(path)
    parts = [os.path.splitext(base)[0]]
    while os.path.isfile(os.path.join(d, "__init__.py")):
        d, pkg = os.path.split(d)
        parts.insert(0, pkg)
    return d, ".".join(parts)


for p in [ws] + cfg.get("paths", []):
    if p not in sys.path:
        sys.path.append(p)

results = {}
modules = {}
autouse = autouse_in_conftests()


def na(reason):
    return {"outcome": "not_applicable", "detail": reason}


def failed(exc):
    return {"outcome": "failed",
            "detail": "".join(traceback.format_exception_only(type(exc), exc)).strip()[:300]}


def marked(obj):
    return bool(getattr(obj, "pytestmark", None))


def run_one(node_id):
    parts, params = split_id(node_id)
    if params:
        return na("parametrized")
    if len(parts) not in (2, 3):
        return na("nested classes or no test name")
    path = os.path.join(ws, parts[0])
    if not os.path.isfile(path):
        return na("test file not found")
    # A doctest (`mod.py::mod`, `mod.py::mod.func`, `README.rst::README.rst`): pytest's doctest
    # collection with the options it was given (`doctest_optionflags`) is the runner; a
    # function of that name is not what it ran.
    if not path.endswith(".py"):
        return na("a doctest of a text file")
    dotted = module_name(path)[1]
    if dotted.endswith(".__init__"):
        dotted = dotted[: -len(".__init__")]
    if len(parts) == 2 and (parts[1] == dotted or "." in parts[1]):
        return na("a doctest (pytest's --doctest-modules)")
    if path not in modules:
        base, name = module_name(path)
        # As pytest's `prepend` mode: the base leads sys.path even when it is already on it
        # further down (the workspace is appended at start), or an installed copy of the
        # project (Debian's python3-more-itertools beside the more-itertools repository)
        # answers the tests' imports here while the workspace's answers them under pytest.
        if sys.path[0] != base:
            sys.path.insert(0, base)
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            mod = importlib.util.module_from_spec(spec)
            sys.modules[name] = mod
            spec.loader.exec_module(mod)
            modules[path] = mod
        except ImportError as e:
            modules[path] = na("the test module needs %s" % (e.name or e))
        except BaseException as e:  # noqa: B036  the import itself failed
            # Django refuses to import models before its settings are configured: that stage
            # is pytest-django's (`--ds`), which this runner does not have.
            if type(e).__module__.startswith("django."):
                modules[path] = na("Django is not set up here (pytest-django's settings)")
            else:
                modules[path] = failed(e)
    mod = modules[path]
    if isinstance(mod, dict):
        return mod
    if marked(mod):
        return na("module-level pytest marks")
    obj = getattr(mod, parts[1], None)
    if obj is None:
        return failed(AttributeError("%s has no %s" % (parts[0], parts[1])))
    # A conftest that acts on every test (an autouse fixture; a configure or session hook
    # that patches what the tests import, as backports.tarfile's `findfile` swap) acts on
    # unittest cases too: without pytest that stage is missing, and the case proves nothing.
    if autouse:
        return na("autouse fixture or setup hook in %s" % autouse)
    # So does an autouse fixture of the test module itself (platformdirs' Windows tests patch
    # the folder lookup for every test of the file).
    if own_autouse(path):
        return na("autouse fixture in %s" % parts[0])
    if len(parts) == 3:
        if isinstance(obj, type) and issubclass(obj, unittest.TestCase):
            if marked(obj) or marked(getattr(obj, parts[2], None)):
                return na("pytest marks")
            # A Django test case needs the project's settings and a test database, which
            # pytest-django sets up and this runner does not.
            if any(c.__module__.startswith("django.") for c in obj.__mro__[1:]):
                return na("a Django test case (pytest-django sets up its settings and database)")
            res = unittest.TestResult()
            try:
                # Through a suite, as pytest and unittest's own runner do: it calls the
                # class's setUpClass and the module's setUpModule (and their tear-downs);
                # a bare TestCase.run skips them and fails a test that relies on them.
                unittest.TestSuite([obj(parts[2])]).run(res)
            except BaseException as e:  # noqa: B036
                return failed(e)
            if res.skipped:
                return na("skipped under unittest")
            if res.expectedFailures or res.unexpectedSuccesses:
                return na("expected-failure test")
            if res.errors or res.failures:
                return {"outcome": "failed", "detail": (res.errors + res.failures)[0][1][-300:]}
            if res.testsRun != 1:
                return failed(RuntimeError("unittest ran %d tests" % res.testsRun))
            return {"outcome": "passed", "detail": "unittest"}
        if not isinstance(obj, type) or any(
                hasattr(obj, h) for h in ("setup_method", "teardown_method", "setup_class",
                                          "teardown_class", "setup", "teardown")):
            return na("test class with setup hooks")
        try:
            inst = obj()
        except BaseException as e:  # noqa: B036
            return na("the class needs arguments: %s" % e)
        fn = getattr(inst, parts[2], None)
    else:
        fn = obj
    if not callable(fn) or marked(fn):
        return na("pytest marks" if callable(fn) else "not callable")
    if inspect.iscoroutinefunction(fn) or inspect.isgeneratorfunction(fn):
        return na("coroutine or generator test")
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return na("no signature")
    if any(p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
           for p in sig.parameters.values()):
        return na("needs fixtures")
    try:
        fn()
    except BaseException as e:  # noqa: B036
        if type(e).__module__.startswith(("_pytest", "pytest")):
            return na("pytest outcome %s" % type(e).__name__)
        return failed(e)
    return {"outcome": "passed", "detail": "harness runner"}


for _id in cfg["ids"]:
    try:
        results[_id] = run_one(_id)
    except BaseException as e:  # noqa: B036
        results[_id] = failed(e)

line = "@@PATCHLOOP-SECOND@@ %s %s\n" % (cfg["nonce"], json.dumps(results, sort_keys=True))
try:
    sys.stdout.flush()
    sys.stderr.flush()
except Exception:
    pass
os.write(_OUT, line.encode())
os._exit(0)
