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
    for name, (verdict, rule, ops) in TAMPER.items():
        meta = {"fail_to_pass": [T + "calc.py::test_add"], "verdict": verdict}
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
