# patchloop's probe of behaviour beyond the tested points (src/verify/probe.rs drives it) and
# the candidates' fault localization (`cover`).
# Executed as `python3 -I -B -c <pl_pytest.py + this file>` in a container of the prepared image (the
# verification container, before and after the patch); input is JSON on stdin with "mode":
#   shadow {"workspace", "paths", "args", "ids", "functions": [{"file", "qualname", "bound",
#           "ints", "strs"}], "max_points", "per_call_s", "deadline_s"}
#       runs the failing tests under pytest (the project's, else the harness's own); at each
#       call of a changed function, calls it again on deep copies: the tested input and its
#       relation-preserving variants (see the comment above `shadow`); reports per distinct
#       input {"fn", "key", "call", "point", "stable", "variants": [{"name", "call", "out",
#       "stable", "moved"}]}.
#   cover {"workspace", "paths", "args", "ids", "targets", "deadline_s"}
#       fault localization (src/agent/localize.rs), in the episode's container: runs `ids`
#       (the target tests' files) under a line tracer, one coverage set per test, and folds
#       them into a spectrum: {"failed", "passed", "lines": {path: [[line, ef, ep, first], ...]}},
#       ef and ep the failing targets and passing tests that ran the line (non-test files only,
#       the tests' child Python processes included; other failing or skipped tests count on
#       neither side), first the earliest a failing target reached it (0..1 of its run).
# Output: one line `@@PATCHLOOP-PROBE@@ <nonce> <json>` on a private copy of stdout taken before
# any project code ran; the process then os._exit()s. Not an integrity layer: the code under
# test shares this process (the capability scan flags a patch that reaches for it).
import ast
import io
import json
import os
import re
import signal
import sys

_pl_seed_hashes()  # pl_pytest.py: the sandbox's PYTHONHASHSEED=0 under -I
_OUT = os.dup(1)
cfg = json.loads(sys.stdin.buffer.read())
sys.stdin = open(os.devnull)
for _k in [k for k in os.environ if k.startswith("PYTEST")]:
    del os.environ[_k]
# The test command's own assignments (`CI=1 pytest`), filtered by the harness (src/testcmd).
for _k, _v in cfg.get("env", {}).items():
    os.environ[_k] = _v
ws = cfg["workspace"]
os.chdir(ws)
for _p in [ws] + cfg.get("paths", []):
    if _p not in sys.path:
        sys.path.append(_p)
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


def load_pytest():
    """The pytest the verifier would choose (`choose_pytest`, prepended from pl_pytest.py: the
    project's when it imports and is at least 6.2, else the harness's own), or the harness's
    when the input says `"runner": "harness"` (the project's ran no test):
    (module, "project" | "harness", why)."""
    if cfg.get("runner") == "harness":
        _pl_use_harness_site()
        import pytest

        return pytest, "harness", "asked for the harness's pytest"
    pytest, runner, why, _ = choose_pytest()
    return pytest, runner, why


class Timeout(BaseException):
    pass


def on_alarm(signum, frame):
    raise Timeout()


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


# The line tracer of `cover`, shared with the tests' child processes (SUBCOVER), which run it
# from source. `hits` maps (file, line) to its position among the lines the run reached first
# (insertion order): among functions the spectrum cannot tell apart, the one a failing run
# reached first is where the run went wrong; the others ran because of it.
TRACER = """
def is_test_file(rel):
    parts = rel.split(os.sep)
    base = parts[-1]
    return (any(p in ("test", "tests", "testing") for p in parts[:-1])
            or base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py")


def make_tracer(root, hits, keep):
    \"\"\"(the trace function, `rel_of`): lines of non-test `.py` files under `root` go to
    `hits`; `keep` caches each file's workspace-relative path (None: not traced).\"\"\"
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
            k = (frame.f_code.co_filename, frame.f_lineno)
            if k not in hits:
                hits[k] = len(hits)
        return local

    def on_call(frame, event, arg):
        if rel_of(frame.f_code.co_filename) is None:
            return None
        k = (frame.f_code.co_filename, frame.f_lineno)
        if k not in hits:
            hits[k] = len(hits)
        return local

    return on_call, rel_of
"""
exec(TRACER)

# `sitecustomize` of the tests' child Python processes during `cover` (a CLI test that runs
# `python -m pkg` or the project's console script executes the code under test in a child):
# the same line tracer, its hits written at exit to PL_COVER_DIR/<test number>.<pid> as
# `path<TAB>line` lines; then the sitecustomize it shadows, if any. A child started with `-I`
# or `-E` ignores PYTHONPATH and is not traced.
SUBCOVER = """
import os, sys
""" + TRACER + """
def _pl_subcover():
    out, test = os.environ.get("PL_COVER_DIR"), os.environ.get("PL_COVER_TEST")
    root = os.environ.get("PL_COVER_ROOT")
    if not (out and test and root):
        return
    import atexit, threading
    hits, keep = {}, {}
    on_call, _ = make_tracer(root, hits, keep)

    def dump():
        sys.settrace(None)
        try:
            with open(os.path.join(out, "%s.%d" % (test, os.getpid())), "w") as f:
                for (fn, ln) in hits:
                    f.write("%s\\t%d\\n" % (keep[fn], ln))
        except OSError:
            pass

    atexit.register(dump)
    threading.settrace(on_call)
    sys.settrace(on_call)


_pl_subcover()
del _pl_subcover


def _pl_chain():
    import importlib.machinery, importlib.util
    here = os.path.dirname(os.path.abspath(__file__))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    spec = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if spec is not None and spec.loader is not None:
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)


_pl_chain()
del _pl_chain
"""


def fill_dirs(files, need):
    """Where the passing side comes from when the targets' files define fewer than `need`
    tests (a regression file of three tests leaves every line of the machinery they share at
    the top score): the nearest test directory above each file (`tests`, `test`, `testing`),
    else the file's own folder; none for a file at the top. `nearest` ranks their tests after
    the files' own, by directory distance."""
    count = 0
    for f in files:
        try:
            with open(os.path.join(ws, f), encoding="utf-8", errors="replace") as fh:
                count += len(re.findall(r"^\s*(?:async\s+)?def test", fh.read(), re.M))
        except OSError:
            pass
    if count >= need:
        return []
    out = []
    for f in files:
        parts = f.split("/")[:-1]
        up = [k for k in range(len(parts), 0, -1) if parts[k - 1] in ("test", "tests", "testing")]
        d = "/".join(parts[:up[0]]) if up else "/".join(parts)
        if d and d not in out:
            out.append(d)
    return out


def nearest(items, targets):
    """Every collected test but the targets, nearest a target first: same file and class, then
    file order; other files by directory distance."""
    where = {}
    for i, it in enumerate(items):
        f, _, rest = it.nodeid.partition("::")
        where[it.nodeid] = (f, rest.rpartition("::")[0], i)
    tpos = [where[t] for t in targets if t in where]

    def apart(a, b):
        """Directory steps between two files' folders."""
        x, y = a.split("/")[:-1], b.split("/")[:-1]
        k = 0
        while k < min(len(x), len(y)) and x[k] == y[k]:
            k += 1
        return len(x) + len(y) - 2 * k

    def key(it):
        f, cls, i = where[it.nodeid]
        near = [(0, c != cls, abs(i - j)) for (tf, c, j) in tpos if tf == f]
        if near:
            return min(near)
        return (1, min([apart(f, tf) for (tf, _, _) in tpos] or [0]), i)
    return sorted((it for it in items if it.nodeid not in targets), key=key)


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
    hits = {}
    on_call, rel_of = make_tracer(root, hits, keep)

    # The tests' child Python processes trace themselves (SUBCOVER) into `subdir`.
    import tempfile

    subdir = tempfile.mkdtemp(prefix="pl-cover-")
    with open(os.path.join(subdir, "sitecustomize.py"), "w") as f:
        f.write(SUBCOVER)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [subdir] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    os.environ["PL_COVER_DIR"] = subdir
    os.environ["PL_COVER_ROOT"] = root

    def child_hits(n):
        """(file, line) the children of test number `n` ran, in file order."""
        out = []
        for name in sorted(os.listdir(subdir)):
            if not name.startswith("%d." % n):
                continue
            try:
                with open(os.path.join(subdir, name)) as f:
                    for row in f:
                        rel, _, ln = row.rstrip("\n").partition("\t")
                        if ln.isdigit() and not is_test_file(rel):
                            out.append((os.path.join(root, rel), int(ln)))
            except OSError:
                continue
        return out

    pytest, runner, why = load_pytest()
    failed_ids, skipped_ids, ran = set(), set(), {}
    # The targets, and at most `sample` other tests of their files, nearest first (same
    # class, then file order): a line's passing-side count needs tests that run it, not all
    # of a large suite (tracing every test of a 700-test file took 46 s).
    sample = int(cfg.get("sample", 0))
    collected = {"items": 0, "kept": 0}
    counter = [0]

    class Spectrum:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_modifyitems(self, session, config, items):
            # A fill directory holding a target's file collects that file a second time.
            seen = set()
            items[:] = [it for it in items if not (it.nodeid in seen or seen.add(it.nodeid))]
            collected["items"] = len(items)
            if sample <= 0 or len(items) <= sample + len(targets):
                collected["kept"] = len(items)
                return
            keep = {it.nodeid for it in nearest(items, targets)[:sample]} | targets
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
            n = counter[0] = counter[0] + 1
            os.environ["PL_COVER_TEST"] = str(n)
            threading.settrace(on_call)
            sys.settrace(on_call)
            try:
                yield
            finally:
                sys.settrace(None)
                threading.settrace(None)
                os.environ.pop("PL_COVER_TEST", None)
                for k in child_hits(n):
                    if rel_of(k[0]) is not None and k not in hits:
                        hits[k] = len(hits)
                total = max(len(hits), 1)
                ran[item.nodeid] = {k: i / total for k, i in hits.items()}

        def pytest_runtest_logreport(self, report):
            if report.failed:
                failed_ids.add(report.nodeid)
            elif report.skipped:
                skipped_ids.add(report.nodeid)

    args = ["-q", "-p", "no:cacheprovider", "--rootdir", ws, "-o", "addopts=",
            "-W", "ignore", "--continue-on-collection-errors"] + list(cfg.get("args", [])) \
        + list(cfg["ids"]) + fill_dirs(cfg["ids"], sample)
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
        for (fn, ln), at in lines.items():
            # [ef, ep, earliest position in a failing run (0 = its first line, 1 = last)]
            c = counts.setdefault((keep[fn], ln), [0, 0, 1.0])
            c[col] += 1
            if col == 0:
                c[2] = min(c[2], at)
    out = {}
    for (rel, ln), (ef, ep, first) in counts.items():
        out.setdefault(rel, []).append([ln, ef, ep, round(first, 6)])
    for v in out.values():
        v.sort()
    emit({"failed": nf, "passed": np, "lines": out, "rc": rc, "runner": runner,
          "runner_why": why, "ran": len(ran), "collected": collected["items"]})


# --- shadow: behaviour beyond the tested points (src/verify/probe.rs `neighbourhood`) -----
#
# The failing tests run under pytest with a profile hook; at each call of a changed function
# (recorded once per distinct input, at most max_points per function) the hook calls the same
# function again on deep copies: the tested input itself ("point") and relation-preserving
# variants of it. Retypes keep every value (int -> float, a numeral string -> its number,
# list <-> tuple, list -> iterator)
# and "days" moves every date a day on, keeping the differences between them;
# shifts and scales move every int (away from zero) and every letter and digit (Caesar) the
# same way, keeping equalities between arguments, signs, zero, emptiness and the function's
# own constants ("landmarks": a value that is one, or whose move would cross one, stays; a
# landmark string inside an argument is kept while the rest moves). For each variant the
# script reports the result and, for shifts and scales, the point's result moved the same way,
# so the verifier can check the relation in both trees: the original code kept it at the
# tested input, does the patched code?


# A string that spells a number (NaN and infinities included): its "number" retype is the
# value it spells.
NUMERAL = re.compile(r"\s*[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?\s*|\s*[-+]?(nan|inf|infinity)\s*",
                     re.IGNORECASE)


class _Iter(list):
    """What an iterator result yielded (up to 1000 items)."""


def _walk(v, leaf, depth=0):
    """v with `leaf` applied to every int/float/str inside lists, tuples, sets and dicts."""
    if depth > 6:
        return v
    t = type(v)
    if t is _Iter:
        return _Iter(_walk(x, leaf, depth + 1) for x in v)
    if t in (list, tuple, set, frozenset):
        return t(_walk(x, leaf, depth + 1) for x in v)
    if t is dict:
        return {_walk(k, leaf, depth + 1): _walk(x, leaf, depth + 1) for k, x in v.items()}
    return leaf(v)


def _int_mover(k, scale, landmarks):
    def move(n):
        if n == 0:
            return n
        m = n * 2 if scale else (n + k if n > 0 else n - k)
        lo, hi = min(n, m), max(n, m)
        if n in landmarks or any(lo <= c <= hi for c in landmarks):
            return n
        return m
    return move


def _caesar(k, protected):
    def shift_text(s):
        out = []
        for ch in s:
            if "a" <= ch <= "z":
                out.append(chr((ord(ch) - 97 + k) % 26 + 97))
            elif "A" <= ch <= "Z":
                out.append(chr((ord(ch) - 65 + k) % 26 + 65))
            elif "0" <= ch <= "9":
                out.append(chr((ord(ch) - 48 + k) % 10 + 48))
            else:
                out.append(ch)
        return "".join(out)

    def move(s):
        if s in protected:
            return s
        # Keep every landmark occurrence, move the text between them.
        spans = []
        for p in protected:
            if len(p) >= 2:
                i = s.find(p)
                while i >= 0:
                    spans.append((i, i + len(p)))
                    i = s.find(p, i + 1)
        keep = [False] * len(s)
        for a, b in spans:
            for i in range(a, b):
                keep[i] = True
        return "".join(ch if keep[i] else shift_text(ch) for i, ch in enumerate(s))
    return move


def _variants(landmarks_i, landmarks_s):
    """(name, transform of a value, transforms a result the same way?) per variant."""
    def mover(k, scale):
        ints = _int_mover(k, scale, landmarks_i)
        text = _caesar(k, landmarks_s) if not scale else (lambda s: s)

        def leaf(x):
            if type(x) is int:
                return ints(x)
            if type(x) is float and x == x and abs(x) < 1e15:
                return x * 2 if scale else x
            if type(x) is str:
                return text(x)
            return x
        return lambda v: _walk(v, leaf)

    def retype(kind):
        def leaf(x):
            if kind == "float" and type(x) is int:
                return float(x)
            if kind == "number" and type(x) is str and NUMERAL.fullmatch(x):
                try:
                    return int(x)
                except ValueError:
                    return float(x)
            return x

        def top(v):
            if kind in ("float", "number"):
                return _walk(v, leaf)
            if kind == "tuple" and type(v) is list:
                return tuple(v)
            if kind == "list" and type(v) is tuple:
                return list(v)
            if kind == "iter" and type(v) in (list, tuple):
                return iter(v)
            return v
        return top

    def dates(v):
        # Every date a day later: differences between them are kept.
        import datetime

        def leaf(x):
            if isinstance(x, datetime.date):
                try:
                    return x + datetime.timedelta(days=1)
                except OverflowError:
                    return x
            return x
        return _walk(v, leaf)

    return [
        ("float", retype("float"), False),
        ("number", retype("number"), False),
        ("days", dates, False),
        ("tuple", retype("tuple"), False),
        ("list", retype("list"), False),
        ("iter", retype("iter"), False),
        ("shift1", mover(1, False), True),
        ("shift3", mover(3, False), True),
        ("scale2", mover(0, True), True),
    ]


def _outcome(call, per_call):
    """canon of the result (iterators materialised), or raise TypeName."""
    import itertools

    saved = sys.stdout, sys.stderr
    sys.stdout = sys.stderr = io.StringIO()
    signal.setitimer(signal.ITIMER_REAL, per_call)
    try:
        r = call()
        if hasattr(r, "__next__") and not isinstance(r, (str, bytes, dict)):
            r = _Iter(itertools.islice(r, 1000))
        return r, None
    except Timeout:
        return None, "timeout after %gs" % per_call
    except BaseException as e:  # noqa: B036  behaviour too
        msg = ADDRESS.sub(" at 0x…", str(e))[:80]
        return None, "raise %s: %s" % (type(e).__name__, msg) if msg else "raise " + type(e).__name__
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        sys.stdout, sys.stderr = saved


def _show(r, err):
    if err is not None:
        return err
    try:
        text = "iter:" + canon(list(r)) if type(r) is _Iter else canon(r)
        if " object at 0x" in text and hasattr(r, "__dict__"):
            text = "%s%s" % (type(r).__name__, canon(dict(vars(r))))
    except BaseException as e:  # noqa: B036
        text = "unrepresentable (%s)" % type(e).__name__
    return ADDRESS.sub(" at 0x…", text)[:500]


def _call_text(qualname, args, kw):
    def one(x):
        if hasattr(x, "__next__") and not isinstance(x, (str, bytes)):
            return "iter(...)"
        return canon(x)
    try:
        parts = [one(a) for a in args] + ["%s=%s" % (k, one(v)) for k, v in kw.items()]
    except BaseException:  # noqa: B036
        parts = ["..."]
    return ADDRESS.sub(" at 0x…", "%s(%s)" % (qualname.rsplit(".", 1)[-1], ", ".join(parts)))[:200]


def target_codes(fns):
    """(realpath, name, line) of each function's code object -> (index in fns, kind): the def
    line and the first decorator's line (a code object's first line is either)."""
    targets = {}
    for i, f in enumerate(fns):
        try:
            ds = defs(parse(f["file"]))
        except (OSError, SyntaxError, ValueError):
            continue
        for q, kind, first, line, _end in ds:
            if q == f["qualname"]:
                path = os.path.realpath(os.path.join(ws, f["file"]))
                for ln in (first, line):
                    targets[(path, q.rsplit(".", 1)[-1], ln)] = (i, kind)
    return targets


_FUNCS = {}


def function_of(code):
    """The one function object running `code` (a closure made twice is ambiguous)."""
    import gc
    import types

    if code not in _FUNCS:
        found = [o for o in gc.get_referrers(code)
                 if isinstance(o, types.FunctionType) and o.__code__ is code]
        _FUNCS[code] = found[0] if len(found) == 1 else None
    return _FUNCS[code]


def call_args(frame, bound):
    """(head, args, kw) of a call about to run: head is the object (or class) of a method,
    never varied."""
    code = frame.f_code
    loc = frame.f_locals
    names = code.co_varnames
    n, k = code.co_argcount, code.co_kwonlyargcount
    pos = [loc[x] for x in names[:n] if x in loc]
    kw = {x: loc[x] for x in names[n:n + k] if x in loc}
    j = n + k
    if code.co_flags & 0x04:
        pos += list(loc.get(names[j], ()))
        j += 1
    if code.co_flags & 0x08:
        kw.update(dict(loc.get(names[j], {})))
    b = 1 if bound and pos else 0
    return pos[:b], pos[b:], kw


_RESUME_AT = {}


def first_entry(frame):
    """A generator frame about to run its first instruction: `f_lasti` is -1 (Python
    <= 3.10) or at the code's first RESUME (3.11+); a resumed one stands past a yield."""
    code = frame.f_code
    at = _RESUME_AT.get(code)
    if at is None:
        import dis
        at = _RESUME_AT[code] = next(
            (i.offset for i in dis.get_instructions(code) if i.opname == "RESUME"), -1)
    return frame.f_lasti < 0 or frame.f_lasti <= at


def calls_hook(targets, record, deadline, fns, notes):
    """A profile hook calling `record(frame, index)` at each call of a target (not while a
    record runs, not after `deadline`)."""
    import time

    busy = [False]
    real = {}

    def prof(frame, event, arg):
        if event != "call" or busy[0]:
            return
        code = frame.f_code
        path = real.get(code.co_filename)
        if path is None:
            path = real[code.co_filename] = os.path.realpath(code.co_filename)
        hit = targets.get((path, code.co_name, code.co_firstlineno))
        if hit is None or time.monotonic() > deadline:
            return
        # A generator: only its first frame entry is a call; later ones resume it. Told by
        # where the frame stands (a finished generator's frame address is reused by the next
        # one's, so remembering frame ids hid every call after the first).
        if code.co_flags & 0x20 and not first_entry(frame):
            return
        busy[0] = True
        sys.setprofile(None)
        try:
            record(frame, hit[0])
        except BaseException as e:  # noqa: B036  the probe must not break the test run
            notes.add("%s: %s" % (fns[hit[0]]["qualname"], type(e).__name__))
        finally:
            busy[0] = False
            sys.setprofile(prof)
    return prof


def shadow():
    import copy
    import time

    signal.signal(signal.SIGALRM, on_alarm)
    per_call = float(cfg.get("per_call_s", 2))
    deadline = time.monotonic() + float(cfg.get("deadline_s", 60))
    cap = int(cfg.get("max_points", 8))
    fns = cfg["functions"]
    targets = target_codes(fns)
    variants = [_variants(set(f.get("ints", [])), set(f.get("strs", []))) for f in fns]
    points = []
    keys = [dict() for _ in fns]
    notes = set()

    def record(frame, i):
        fn = function_of(frame.f_code)
        if fn is None:
            notes.add("%s: not one function object" % fns[i]["qualname"])
            return
        head, args, kw = call_args(frame, fns[i].get("bound"))
        try:
            # Addresses differ between the trees' processes: the key must not carry them.
            key = ADDRESS.sub(" at 0x…", canon((args, sorted(kw.items()))))
        except BaseException:  # noqa: B036
            return
        seen = keys[i]
        if key not in seen and len(seen) >= cap:
            return
        seen[key] = seen.get(key, 0) + 1
        ordinal = seen[key] - 1
        if ordinal > 0:
            return

        def copies(a, kw):
            try:
                return copy.deepcopy(head), copy.deepcopy(a), copy.deepcopy(kw)
            except BaseException:  # noqa: B036
                try:
                    return [copy.copy(h) for h in head], copy.deepcopy(a), copy.deepcopy(kw)
                except BaseException:  # noqa: B036
                    return None

        def twice(a, kw):
            outs = []
            for _ in range(2):
                c = copies(a, kw)
                if c is None:
                    return None, "not copyable", False
                h, a2, kw2 = c
                r, err = _outcome(lambda: fn(*h, *a2, **kw2), per_call)
                outs.append((r, err))
            shown = [_show(*o) for o in outs]
            return outs[0], shown[0], shown[0] == shown[1]

        point, point_text, stable = twice(args, kw)
        entry = {"fn": i, "key": key[:300], "point": point_text, "stable": stable, "variants": [],
                 "call": _call_text(fns[i]["qualname"], args, kw)}
        for name, move, moves_result in variants[i]:
            if time.monotonic() > deadline:
                break
            try:
                a2 = [move(x) for x in args]
                kw2 = {kk: move(x) for kk, x in kw.items()}
                same = ADDRESS.sub(" at 0x…", canon((a2, sorted(kw2.items())))) == key
            except BaseException:  # noqa: B036
                continue
            if same:
                continue
            _, text, ok = twice(a2, kw2)
            moved = None
            if moves_result and point is not None and point[1] is None:
                try:
                    moved = _show(move(point[0]), None)
                except BaseException:  # noqa: B036
                    moved = None
            entry["variants"].append({"name": name, "out": text, "stable": ok, "moved": moved,
                                      "call": _call_text(fns[i]["qualname"], a2, kw2)})
        points.append(entry)

    prof = calls_hook(targets, record, deadline, fns, notes)
    pytest, runner, _ = load_pytest()

    class Shadow:
        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item):
            sys.setprofile(prof)
            try:
                yield
            finally:
                sys.setprofile(None)

    args = ["-q", "-p", "no:cacheprovider", "--rootdir", ws, "-o", "addopts=",
            "-W", "ignore"] + list(cfg.get("args", [])) + list(cfg["ids"])
    try:
        rc = int(pytest.main(args, plugins=[Shadow()]))
    except BaseException as e:  # noqa: B036
        rc = "%s" % type(e).__name__
    emit({"points": points, "rc": rc, "runner": runner, "notes": sorted(notes)})


# The modes are dispatched at the end of pl_differ.py, which is sent after this file.
