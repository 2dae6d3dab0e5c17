#!/usr/bin/env python3
"""Check that every case of the gaming corpus is what it claims to be.

Per case, in a temporary directory (host python3, no Docker):
  1. extract the pristine sdist, apply bug.diff: every fail_to_pass test fails;
  2. apply gold.diff: fail_to_pass passes, no test that passes on the pristine tree fails,
     wrong_on.py passes;
  3. back to the buggy tree, apply patch.diff: fail_to_pass passes, no new failures,
     wrong_on.py fails for a gaming case and passes for a genuine one.
Also: no diff touches a test file, case.json has every field, wrong_on.py has a docstring,
a gaming patch differs from gold.

    python3 tests/corpus/gaming/check.py              # every case
    python3 tests/corpus/gaming/check.py ID [ID ...]   # some cases
    python3 tests/corpus/gaming/check.py -j 2         # two cases at a time
    python3 tests/corpus/gaming/check.py -v           # and how wrong_on.py fails on each patch

Prints one line per case and a summary (class x kind, libraries); exits 1 if any case fails.
pytest comes from the running interpreter, or from a venv made once under /tmp.
"""
import argparse
import ast
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "cases")
REPO = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
VENV = os.path.join(tempfile.gettempdir(), "patchloop-gaming-venv")

CLASSES = ("answer_table", "exception_swallowing", "tested_shape_fast_path",
           "type_protocol_lie", "oracle_edit", "state_across_calls", "dropped_feature",
           "branch_only_fix", "compensating_edit", "early_conversion", "size_bounded_rewrite",
           "dropped_in_one_branch", "lazy_or_broad_exception", "keyed_on_properties")
KINDS = ("gaming", "genuine")
FIELDS = ("library", "source", "bug", "fail_to_pass", "pass_to_pass_sample", "kind",
          "class", "wrong_on", "test_command")
TEST_TIMEOUT = 900

# A pytest plugin that writes {nodeid: outcome} to $GAMING_OUTCOMES: a test failed if any
# phase (setup, call, teardown) failed, so errors in fixtures count as failures.
PLUGIN = '''
import json, os
_out = {}
def pytest_runtest_logreport(report):
    prev = _out.get(report.nodeid)
    if report.failed:
        _out[report.nodeid] = "failed"
    elif report.skipped and prev is None:
        _out[report.nodeid] = "skipped"
    elif report.when == "call" and report.passed and prev is None:
        _out[report.nodeid] = "passed"
def pytest_sessionfinish(session):
    with open(os.environ["GAMING_OUTCOMES"], "w") as f:
        json.dump(_out, f)
'''


class CaseError(Exception):
    pass


def python_with_pytest():
    """An interpreter that can `import pytest`: this one, else a venv made once under /tmp."""
    if subprocess.run([sys.executable, "-c", "import pytest"],
                      capture_output=True).returncode == 0:
        return sys.executable
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run([py, "-m", "pip", "install", "-q", "pytest"], check=True)
    return py


def is_test_path(path):
    parts = path.split("/")
    name = parts[-1]
    return (any(p in ("tests", "test", "testing") for p in parts[:-1])
            or name.startswith("test_") or name.endswith("_test.py")
            or name == "conftest.py")


def diff_paths(diff_text):
    paths = set()
    for line in diff_text.splitlines():
        m = re.match(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", line)
        if m and m.group(1) != "/dev/null":
            paths.add(m.group(1))
        m = re.match(r"^diff --git a/(\S+) b/(\S+)", line)
        if m:
            paths.update(m.groups())
    return paths


class Tree:
    """A scratch copy of one library: pristine, then buggy, then gold or patch on top."""

    def __init__(self, work, source, py, plugin_dir):
        self.root = os.path.join(work, "tree")
        self.py = py
        self.plugin_dir = plugin_dir
        os.makedirs(self.root)
        with tarfile.open(os.path.join(REPO, source)) as t:
            if hasattr(tarfile, "data_filter"):
                t.extractall(self.root, filter="data")
            else:
                t.extractall(self.root)
        self.git("init", "-q")
        self.git("add", "-A")
        self.git("-c", "user.name=gaming", "-c", "user.email=gaming@localhost",
                 "commit", "-qm", "pristine")

    def git(self, *args, stdin=None):
        r = subprocess.run(["git", *args], cwd=self.root, input=stdin, text=True,
                           capture_output=True)
        if r.returncode != 0:
            raise CaseError("git %s: %s" % (" ".join(args[:2]), r.stderr.strip()))
        return r.stdout

    def apply(self, diff_text, what):
        try:
            self.git("apply", "--whitespace=nowarn", "-", stdin=diff_text)
        except CaseError as e:
            raise CaseError("%s does not apply: %s" % (what, e))

    def commit(self, msg):
        self.git("add", "-A")
        self.git("-c", "user.name=gaming", "-c", "user.email=gaming@localhost",
                 "commit", "-qm", msg, "--allow-empty")

    def reset(self):
        self.git("reset", "-q", "--hard", "HEAD")
        self.git("clean", "-qfdx")

    def env(self):
        env = dict(os.environ)
        paths = [self.root]
        if os.path.isdir(os.path.join(self.root, "src")):
            paths.insert(0, os.path.join(self.root, "src"))
        env["PYTHONPATH"] = os.pathsep.join(paths + [self.plugin_dir])
        env["PYTHONDONTWRITEBYTECODE"] = "1"
        env["PYTHONHASHSEED"] = "0"
        return env

    def pytest(self, test_command, ids=()):
        """{nodeid: outcome} of the suite (or of `ids`)."""
        argv = test_command.split()
        if argv[0] in ("python", "python3"):
            argv[0] = self.py
        out = os.path.join(os.path.dirname(self.root), "outcomes.json")
        if os.path.exists(out):
            os.remove(out)
        env = self.env()
        env["GAMING_OUTCOMES"] = out
        argv += ["-p", "no:cacheprovider", "-p", "gaming_outcomes", "-q", *ids]
        try:
            r = subprocess.run(argv, cwd=self.root, env=env, capture_output=True, text=True,
                               timeout=TEST_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise CaseError("tests timed out after %ds" % TEST_TIMEOUT)
        if not os.path.exists(out):
            raise CaseError("pytest wrote no outcomes (exit %d): %s"
                            % (r.returncode, (r.stdout + r.stderr)[-800:]))
        with open(out) as f:
            return json.load(f)

    def wrong_on(self, script):
        try:
            r = subprocess.run([self.py, script], cwd=self.root, env=self.env(),
                               capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            return False, "timed out"
        tail = (r.stdout + r.stderr).strip().splitlines()
        return r.returncode == 0, (tail[-1] if tail else "")


_baseline_lock = threading.Lock()
_baselines = {}


def baseline(source, test_command, py, plugin_dir):
    """The tests that pass on the pristine tree (computed once per source and command)."""
    key = (source, test_command)
    with _baseline_lock:
        if key not in _baselines:
            with tempfile.TemporaryDirectory(prefix="gaming-base-") as work:
                t = Tree(work, source, py, plugin_dir)
                res = t.pytest(test_command)
            _baselines[key] = {k for k, v in res.items() if v == "passed"}
        return _baselines[key]


def load_case(case_dir):
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    missing = [k for k in FIELDS if k not in case]
    if missing:
        raise CaseError("case.json lacks %s" % ", ".join(missing))
    if case["kind"] not in KINDS:
        raise CaseError("unknown kind %r" % case["kind"])
    if case["class"] not in CLASSES:
        raise CaseError("unknown class %r" % case["class"])
    if not case["fail_to_pass"]:
        raise CaseError("empty fail_to_pass")
    if not case["wrong_on"].strip():
        raise CaseError("empty wrong_on")
    return case


def read(case_dir, name):
    p = os.path.join(case_dir, name)
    if not os.path.exists(p):
        raise CaseError("missing %s" % name)
    with open(p) as f:
        return f.read()


def check_case(case_dir, py, plugin_dir):
    """Returns (case, list of notes); raises CaseError on the first claim that does not hold."""
    case = load_case(case_dir)
    bug = read(case_dir, case["bug"])
    gold = read(case_dir, "gold.diff")
    patch = read(case_dir, "patch.diff")
    script_src = read(case_dir, "wrong_on.py")
    if not ast.get_docstring(ast.parse(script_src)):
        raise CaseError("wrong_on.py has no docstring naming the input")
    for name, text in (("gold.diff", gold), ("patch.diff", patch)):
        touched = sorted(p for p in diff_paths(text) if is_test_path(p))
        if touched:
            raise CaseError("%s touches test files: %s" % (name, ", ".join(touched)))
        if not diff_paths(text):
            raise CaseError("%s changes nothing" % name)
    if case["kind"] == "gaming" and patch.strip() == gold.strip():
        raise CaseError("a gaming patch equal to gold")
    f2p = case["fail_to_pass"]
    cmd = case["test_command"]
    base = baseline(case["source"], cmd, py, plugin_dir)
    missing = [t for t in f2p + case["pass_to_pass_sample"] if t not in base]
    if missing:
        raise CaseError("tests that do not pass on the pristine source: %s" % missing[:3])
    script = os.path.abspath(os.path.join(case_dir, "wrong_on.py"))

    with tempfile.TemporaryDirectory(prefix="gaming-case-") as work:
        t = Tree(work, case["source"], py, plugin_dir)
        t.apply(bug, "bug.diff")
        t.commit("buggy")
        res = t.pytest(cmd, f2p)
        passing = [x for x in f2p if res.get(x) == "passed"]
        if passing:
            raise CaseError("fail_to_pass passes on the buggy tree: %s" % passing[:3])

        def fixed(diff_text, what):
            t.reset()
            t.apply(diff_text, what)
            res = t.pytest(cmd)
            still = [x for x in f2p if res.get(x) != "passed"]
            if still:
                raise CaseError("%s: fail_to_pass still fails: %s" % (what, still[:3]))
            broken = sorted(x for x in base if res.get(x) != "passed")
            if broken:  # rerun once: a flaky test is not a new failure
                again = t.pytest(cmd, broken)
                broken = [x for x in broken if again.get(x) != "passed"]
            if broken:
                raise CaseError("%s: new failures: %s" % (what, broken[:3]))
            return t.wrong_on(script)

        ok, tail = fixed(gold, "gold.diff")
        if not ok:
            raise CaseError("wrong_on.py fails on gold: %s" % tail)
        ok, tail = fixed(patch, "patch.diff")
        if case["kind"] == "gaming" and ok:
            raise CaseError("wrong_on.py passes on the gaming patch")
        if case["kind"] == "genuine" and not ok:
            raise CaseError("wrong_on.py fails on the genuine patch: %s" % tail)
        return case, tail


def summary(results):
    rows = {}
    libs = {}
    for case, ok in results:
        if case is None:
            continue
        rows.setdefault(case["class"], {k: 0 for k in KINDS})[case["kind"]] += 1
        libs.setdefault(case["library"], {k: 0 for k in KINDS})[case["kind"]] += 1
    lines = ["", "%-24s %7s %8s" % ("class", "gaming", "genuine")]
    tot = {k: 0 for k in KINDS}
    for c in CLASSES:
        r = rows.get(c, {k: 0 for k in KINDS})
        lines.append("%-24s %7d %8d" % (c, r["gaming"], r["genuine"]))
        for k in KINDS:
            tot[k] += r[k]
    lines.append("%-24s %7d %8d" % ("total", tot["gaming"], tot["genuine"]))
    lines.append("")
    lines.append("%-24s %7s %8s" % ("library", "gaming", "genuine"))
    for lib in sorted(libs):
        lines.append("%-24s %7d %8d" % (lib, libs[lib]["gaming"], libs[lib]["genuine"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ids", nargs="*", help="case ids (folder names under cases/); all if none")
    ap.add_argument("-j", "--jobs", type=int, default=1, help="cases checked at a time")
    ap.add_argument("-v", "--verbose", action="store_true",
                    help="show how wrong_on.py fails on each gaming patch")
    args = ap.parse_args()
    ids = args.ids or sorted(d for d in os.listdir(CASES)
                             if os.path.isfile(os.path.join(CASES, d, "case.json")))
    unknown = [i for i in ids if not os.path.isdir(os.path.join(CASES, i))]
    if unknown:
        sys.exit("no such case: %s" % ", ".join(unknown))
    py = python_with_pytest()
    plugin_dir = tempfile.mkdtemp(prefix="gaming-plugin-")
    with open(os.path.join(plugin_dir, "gaming_outcomes.py"), "w") as f:
        f.write(PLUGIN)
    results = []
    failed = 0

    def one(i):
        try:
            case, tail = check_case(os.path.join(CASES, i), py, plugin_dir)
            return i, case, tail, None
        except CaseError as e:
            return i, None, "", str(e)
        except Exception as e:  # a broken case must not hide the others
            return i, None, "", "%s: %s" % (type(e).__name__, e)

    try:
        with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as ex:
            for i, case, tail, err in ex.map(one, ids):
                if err:
                    failed += 1
                    print("FAIL %-52s %s" % (i, err), flush=True)
                else:
                    line = "ok   %-52s %-8s %-22s" % (i, case["kind"], case["class"])
                    if args.verbose and case["kind"] == "gaming":
                        line += " patch: " + tail[:100]
                    print(line, flush=True)
                results.append((case, err is None))
    finally:
        shutil.rmtree(plugin_dir, ignore_errors=True)
    print(summary(results))
    print("\n%d cases, %d hold, %d fail" % (len(ids), len(ids) - failed, failed))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
