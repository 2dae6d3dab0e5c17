# patchloop's edge-case probe (informational, never a gate; src/verify/probe.rs drives it) and
# the candidates' fault localization (`cover`).
# Executed as `python3 -I -B -c <this file>` in a fresh, network-less container of the prepared
# image, once per step and tree (before / after the patch); input is JSON on stdin with "mode":
#   locate {"workspace", "lines": {path: [line, ...]}, "files": [path, ...]}
#       the innermost `def` around each changed line (ast): top-level functions and static and
#       class methods are probed (PROBED), instance methods and nested functions are named in
#       "skipped", lines outside any def in "outside"; "defined" lists the probed kinds of every
#       file named (a function the patch adds or removes exists in one tree only).
#   record {"workspace", "paths", "args", "ids", "functions": [{"file", "qualname"}], "max_calls"}
#       runs the target tests under pytest (the project's, else the harness's own) with a
#       profile hook during each test's call phase; keeps calls of the functions whose every
#       argument is a plain literal (see enc), at most max_calls distinct calls per function.
#   run {"workspace", "paths", "functions": [{"file", "qualname", "module", "base"}],
#        "inputs": [{"fn", "args", "kwargs"}], "deadline_s", "per_call_s"}
#       calls each input twice in this process: `repr(result)` (set elements sorted) or
#       `raise TypeName`; an input whose two calls disagree is "unstable"; inputs past the
#       deadline are null.
#   cover {"workspace", "paths", "args", "ids", "targets", "deadline_s"}
#       fault localization (src/agent/localize.rs), in the episode's container: runs `ids`
#       (the target tests' files) under a line tracer, one coverage set per test, and folds
#       them into a spectrum: {"failed", "passed", "lines": {path: [[line, ef, ep], ...]}}, ef
#       and ep the failing targets and passing tests that ran the line (non-test files only;
#       other failing or skipped tests count on neither side).
# Values travel as tagged JSON ({"t": "int", "v": 3}; "lit" is any other literal, as its repr,
# read back with ast.literal_eval), so the Rust side generates variants without parsing Python.
# Output: one line `@@PATCHLOOP-PROBE@@ <nonce> <json>` on a private copy of stdout taken before
# any project code ran; the process then os._exit()s.
import ast
import importlib
import importlib.util
import io
import json
import os
import re
import signal
import sys

_OUT = os.dup(1)
cfg = json.loads(sys.stdin.buffer.read())
sys.stdin = open(os.devnull)
for _k in [k for k in os.environ if k.startswith("PYTEST")]:
    del os.environ[_k]
ws = cfg["workspace"]
os.chdir(ws)
for _p in [ws] + cfg.get("paths", []):
    if _p not in sys.path:
        sys.path.append(_p)
HARNESS_SITE = "/opt/patchloop/harness-site"
ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+")


def emit(obj):
    line = "@@PATCHLOOP-PROBE@@ %s %s\n" % (cfg["nonce"], json.dumps(obj, sort_keys=True))
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:
        pass
    os.write(_OUT, line.encode())
    os._exit(0)


def parse(path):
    with open(os.path.join(ws, path), "rb") as f:
        return ast.parse(f.read(), filename=path)


def defs(tree):
    """(qualname, kind, first line incl. decorators, def line, end line) of every def."""
    out = []

    def walk(node, prefix, in_def, in_class):
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef)):
                q = prefix + ch.name
                kind = "nested" if in_def else ("method" if in_class else "function")
                if kind == "method":
                    names = {d.id for d in ch.decorator_list if isinstance(d, ast.Name)}
                    # Callable through the class with literal arguments alone.
                    kind = next((k for k in ("staticmethod", "classmethod") if k in names), kind)
                first = min([d.lineno for d in ch.decorator_list] + [ch.lineno])
                out.append((q, kind, first, ch.lineno, getattr(ch, "end_lineno", ch.lineno)))
                walk(ch, q + ".<locals>.", True, False)
            elif isinstance(ch, ast.ClassDef):
                walk(ch, prefix + ch.name + ".", in_def, True)
            else:
                walk(ch, prefix, in_def, in_class)

    walk(tree, "", False, False)
    return out


# Kinds called with literal arguments: functions, and static and class methods through their
# class (a class method's `cls` is not recorded). Instance methods need a `self`: not probed.
PROBED = ("function", "staticmethod", "classmethod")


def locate():
    functions, skipped, outside, defined = [], [], [], {}
    for path in sorted(set(cfg.get("files", [])) | set(cfg["lines"])):
        lines = cfg["lines"].get(path, [])
        try:
            ds = defs(parse(path))
        except (OSError, SyntaxError, ValueError) as e:
            if lines:
                skipped.append("%s: not parsed (%s)" % (path, type(e).__name__))
            continue
        defined[path] = [d[0] for d in ds if d[1] in PROBED]
        for ln in sorted(set(lines)):
            around = [d for d in ds if d[2] <= ln <= d[4]]
            if not around:
                if path not in outside:
                    outside.append(path)
                continue
            q, kind = max(around, key=lambda d: d[2])[:2]
            entry = {"file": path, "qualname": q}
            if kind not in PROBED:
                note = "%s::%s (%s)" % (path, q, kind)
                if note not in skipped:
                    skipped.append(note)
            elif entry not in functions:
                functions.append(entry)
    emit({"functions": functions, "skipped": skipped, "outside": outside, "defined": defined})


SIMPLE = (bool, int, float, complex, str, bytes, type(None))


def enc(v, depth=0):
    """Tagged JSON for a plain literal value, or None when it is not one."""
    if depth > 4:
        return None
    if v is None:
        return {"t": "none"}
    if type(v) is bool:
        return {"t": "bool", "v": v}
    if type(v) is int:
        return {"t": "int", "v": v} if -(2 ** 63) <= v < 2 ** 63 else {"t": "lit", "v": repr(v)}
    if type(v) is str:
        try:
            v.encode("utf-8")  # lone surrogates have no JSON the harness reads
        except UnicodeError:
            return None
        return {"t": "str", "v": v} if len(v) <= 1000 else None
    if type(v) in (list, tuple):
        if len(v) > 50:
            return None
        items = [enc(x, depth + 1) for x in v]
        if any(i is None for i in items):
            return None
        return {"t": "list" if type(v) is list else "tuple", "v": items}
    if type(v) is float:
        r = repr(v)
        return {"t": "float", "v": r} if float(r) == v else None
    # Anything else only if its repr round-trips to an equal value of the same type.
    if type(v) in SIMPLE + (dict, set, frozenset):
        try:
            r = repr(v)
            if len(r) <= 2000 and type(ast.literal_eval(r)) is type(v) and ast.literal_eval(r) == v:
                return {"t": "lit", "v": r}
        except Exception:
            return None
    return None


def dec(j):
    t = j["t"]
    if t == "none":
        return None
    if t in ("bool", "int", "str"):
        return j["v"]
    if t == "float":
        return float(j["v"])
    if t == "list":
        return [dec(x) for x in j["v"]]
    if t == "tuple":
        return tuple(dec(x) for x in j["v"])
    return ast.literal_eval(j["v"])


def load_pytest():
    """The project's pytest, else the harness's own: (module, "project" | "harness")."""
    try:
        import pytest

        return pytest, "project"
    except Exception:
        # As pl_run.py: forget what the failed import loaded, the harness's site before the
        # environment's site-packages (never before the workspace).
        tops = {n[:-3] if n.endswith(".py") else n for n in os.listdir(HARNESS_SITE)
                if not n.endswith((".dist-info", ".egg-info"))}
        for m in [m for m in sys.modules if m.split(".")[0] in tops]:
            del sys.modules[m]
        at = next((i for i, p in enumerate(sys.path)
                   if p.endswith(("site-packages", "dist-packages"))), len(sys.path))
        sys.path.insert(at, HARNESS_SITE)
        import pytest

        return pytest, "harness"


def record():
    targets = {}
    for i, f in enumerate(cfg["functions"]):
        try:
            ds = defs(parse(f["file"]))
        except (OSError, SyntaxError, ValueError):
            continue
        for q, kind, first, line, _end in ds:
            if q == f["qualname"]:
                name = q.rsplit(".", 1)[-1]
                path = os.path.realpath(os.path.join(ws, f["file"]))
                for ln in (first, line):
                    targets[(path, name, ln)] = (i, 1 if kind == "classmethod" else 0)
    calls = [[] for _ in cfg["functions"]]
    seen = [0 for _ in cfg["functions"]]
    cap = int(cfg.get("max_calls", 20))
    real = {}

    def prof(frame, event, arg):
        if event != "call":
            return
        code = frame.f_code
        fn = code.co_filename
        path = real.get(fn)
        if path is None:
            path = real[fn] = os.path.realpath(fn)
        hit = targets.get((path, code.co_name, code.co_firstlineno))
        if hit is None or len(calls[hit[0]]) >= cap:
            return
        i, skip = hit
        seen[i] += 1
        loc = frame.f_locals
        names = code.co_varnames
        n, k = code.co_argcount, code.co_kwonlyargcount
        args = [enc(loc.get(x)) if x in loc else None for x in names[skip:n]]
        kwargs = [[x, enc(loc.get(x))] for x in names[n:n + k] if x in loc]
        j = n + k
        if code.co_flags & 0x04:
            extra = loc.get(names[j], ())
            j += 1
            args += [enc(x) for x in extra]
        if code.co_flags & 0x08:
            for kk, vv in dict(loc.get(names[j], {})).items():
                kwargs.append([kk, enc(vv)])
        if any(a is None for a in args) or any(v is None for _, v in kwargs):
            return
        c = {"args": args, "kwargs": kwargs}
        if c not in calls[i]:
            calls[i].append(c)

    pytest, runner = load_pytest()

    class Recorder:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item):
            # Once every function has its calls, the tests run without the hook's cost.
            active = any(len(c) < cap for c in calls)
            if active:
                sys.setprofile(prof)
            try:
                yield
            finally:
                if active:
                    sys.setprofile(None)

    args = ["-q", "-p", "no:cacheprovider", "--rootdir", ws, "-o", "addopts=",
            "-W", "ignore"] + list(cfg.get("args", [])) + list(cfg["ids"])
    try:
        rc = int(pytest.main(args, plugins=[Recorder()]))
    except BaseException as e:  # noqa: B036  a test that ends the session still leaves calls
        rc = "%s" % type(e).__name__
    modules = []
    for f in cfg["functions"]:
        path = os.path.realpath(os.path.join(ws, f["file"]))
        found = None
        for name, m in list(sys.modules.items()):
            mf = getattr(m, "__file__", None)
            if mf and os.path.realpath(mf) == path:
                found = name
                break
        modules.append(found)
    emit({"calls": calls, "seen": seen, "modules": modules, "rc": rc, "runner": runner})


def module_name(path):
    """pytest's `prepend` rule: up through packages (__init__.py), the rest is the base."""
    d, base = os.path.split(path)
    parts = [os.path.splitext(base)[0]]
    while os.path.isfile(os.path.join(d, "__init__.py")):
        d, pkg = os.path.split(d)
        parts.insert(0, pkg)
    if parts[-1] == "__init__":
        parts.pop()
    return d, ".".join(parts)


class Timeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise Timeout()


def load(f):
    path = os.path.join(ws, f["file"])
    if not os.path.isfile(path):
        return "missing: %s not in this tree" % f["file"]
    name = f.get("module")
    if name:
        # The base directory the module was imported from under pytest.
        rel = name.replace(".", os.sep)
        real = os.path.realpath(path)
        for suffix in (os.sep + "__init__.py", ".py"):
            if real.endswith(os.sep + rel + suffix):
                base = real[: -len(os.sep + rel + suffix)]
                if base not in sys.path:
                    sys.path.append(base)
    else:
        base, name = module_name(os.path.realpath(path))
        if base not in sys.path:
            sys.path.append(base)
    try:
        mod = importlib.import_module(name)
    except BaseException as e:  # noqa: B036
        return "missing: importing %s raised %s" % (name, type(e).__name__)
    obj = mod
    for part in f["qualname"].split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            return "missing: %s has no %s" % (name, f["qualname"])
    if not callable(obj):
        return "missing: %s.%s is not callable" % (name, f["qualname"])
    return obj


def canon(v, depth=0):
    """repr, with set elements sorted: their order follows string hashes, which differ from
    process to process (`-I` ignores PYTHONHASHSEED), so two trees would seem to disagree."""
    if depth < 4:
        if type(v) in (set, frozenset):
            items = sorted(canon(x, depth + 1) for x in v)
            if not items:
                return repr(v)
            body = ", ".join(items)
            return "{%s}" % body if type(v) is set else "frozenset({%s})" % body
        if type(v) is list:
            return "[%s]" % ", ".join(canon(x, depth + 1) for x in v)
        if type(v) is tuple:
            inner = ", ".join(canon(x, depth + 1) for x in v)
            return "(%s,)" % inner if len(v) == 1 else "(%s)" % inner
        if type(v) is dict:
            return "{%s}" % ", ".join(
                "%s: %s" % (canon(k, depth + 1), canon(x, depth + 1)) for k, x in v.items())
    return repr(v)


def call_once(fn, a, kw, per_call):
    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()
    signal.setitimer(signal.ITIMER_REAL, per_call)
    try:
        r = fn(*a, **kw)
        out = canon(r)
    except Timeout:
        out = "timeout after %gs" % per_call
    except BaseException as e:  # noqa: B036  SystemExit, KeyboardInterrupt: behaviour too
        out = "raise " + type(e).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout, sys.stderr = saved
    return ADDRESS.sub(" at 0x…", out)[:500]


def run():
    import time

    signal.signal(signal.SIGALRM, on_alarm)
    deadline = time.monotonic() + float(cfg.get("deadline_s", 20))
    per_call = float(cfg.get("per_call_s", 2))
    fns = [load(f) for f in cfg["functions"]]
    results = []
    for inp in cfg["inputs"]:
        if time.monotonic() > deadline:
            results.append(None)
            continue
        fn = fns[inp["fn"]]
        if isinstance(fn, str):
            results.append({"out": fn, "stable": True})
            continue
        outs = []
        for _ in range(2):
            try:
                a = [dec(x) for x in inp["args"]]
                kw = {k: dec(v) for k, v in inp["kwargs"]}
            except Exception as e:
                outs.append("undecodable input (%s)" % type(e).__name__)
                continue
            outs.append(call_once(fn, a, kw, per_call))
        results.append({"out": outs[0], "stable": outs[0] == outs[1]})
    emit({"results": results})


def is_test_file(rel):
    parts = rel.split(os.sep)
    base = parts[-1]
    return (any(p in ("test", "tests", "testing") for p in parts[:-1])
            or base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py")


def cover():
    """Per-test line coverage of the workspace's non-test code, folded into a spectrum: for
    each line, how many target (failing) tests and how many passing tests ran it. Other
    failing or skipped tests are left out of both counts."""
    import threading
    import time

    deadline = time.monotonic() + float(cfg.get("deadline_s", 60))
    root = os.path.realpath(ws) + os.sep
    targets = set(cfg["targets"])
    keep = {}
    hits = set()

    def rel_of(fn):
        r = keep.get(fn, 0)
        if r == 0:
            p = os.path.realpath(fn)
            r = None
            if p.startswith(root) and p.endswith(".py") and "site-packages" not in p:
                rel = p[len(root):]
                if not is_test_file(rel):
                    r = rel
            keep[fn] = r
        return r

    def local(frame, event, arg):
        if event == "line":
            hits.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    def on_call(frame, event, arg):
        if rel_of(frame.f_code.co_filename) is None:
            return None
        hits.add((frame.f_code.co_filename, frame.f_lineno))
        return local

    pytest, runner = load_pytest()
    failed_ids, skipped_ids, ran = set(), set(), {}
    # The targets, and at most `sample` other tests of their files, nearest first (same
    # class, then file order): a line's passing-side count needs tests that run it, not all
    # of a large suite (tracing every test of a 700-test file took 46 s).
    sample = int(cfg.get("sample", 0))
    collected = {"items": 0, "kept": 0}

    def nearest(items):
        where = {}
        for i, it in enumerate(items):
            f, _, rest = it.nodeid.partition("::")
            where[it.nodeid] = (f, rest.rpartition("::")[0], i)
        tpos = [where[t] for t in targets if t in where]

        def key(it):
            f, cls, i = where[it.nodeid]
            near = [(c != cls, abs(i - j)) for (tf, c, j) in tpos if tf == f]
            return min(near) if near else (True, len(items))
        return sorted((it for it in items if it.nodeid not in targets), key=key)

    class Spectrum:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, session, config, items):
            collected["items"] = len(items)
            if sample <= 0 or len(items) <= sample + len(targets):
                collected["kept"] = len(items)
                return
            keep = {it.nodeid for it in nearest(items)[:sample]} | targets
            kept = [it for it in items if it.nodeid in keep]
            dropped = [it for it in items if it.nodeid not in keep]
            config.hook.pytest_deselected(items=dropped)
            items[:] = kept
            collected["kept"] = len(kept)

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_protocol(self, item, nextitem):
            if time.monotonic() > deadline:
                item.session.shouldstop = "patchloop: coverage deadline"
            hits.clear()
            threading.settrace(on_call)
            sys.settrace(on_call)
            try:
                yield
            finally:
                sys.settrace(None)
                threading.settrace(None)
                ran[item.nodeid] = frozenset(hits)

        def pytest_runtest_logreport(self, report):
            if report.failed:
                failed_ids.add(report.nodeid)
            elif report.skipped:
                skipped_ids.add(report.nodeid)

    args = ["-q", "-p", "no:cacheprovider", "--rootdir", ws, "-o", "addopts=",
            "-W", "ignore"] + list(cfg.get("args", [])) + list(cfg["ids"])
    try:
        rc = int(pytest.main(args, plugins=[Spectrum()]))
    except BaseException as e:  # noqa: B036  what ran before a session-ending test still counts
        rc = "%s" % type(e).__name__
    counts = {}
    nf = np = 0
    for nodeid, lines in ran.items():
        if nodeid in failed_ids:
            if nodeid not in targets:
                continue
            col = 0
            nf += 1
        elif nodeid in skipped_ids or nodeid in targets:
            continue
        else:
            col = 1
            np += 1
        for fn, ln in lines:
            c = counts.setdefault((keep[fn], ln), [0, 0])
            c[col] += 1
    out = {}
    for (rel, ln), (ef, ep) in counts.items():
        out.setdefault(rel, []).append([ln, ef, ep])
    for v in out.values():
        v.sort()
    emit({"failed": nf, "passed": np, "lines": out, "rc": rc, "runner": runner,
          "ran": len(ran), "collected": collected["items"]})


try:
    {"locate": locate, "record": record, "run": run, "cover": cover}[cfg["mode"]]()
except BaseException as e:  # noqa: B036
    emit({"error": "%s: %s" % (type(e).__name__, str(e)[:300])})
