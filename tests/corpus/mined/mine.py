#!/usr/bin/env python3
"""Mine upstream bug fixes from libraries' git histories as gold patches for the verifier's
pure layers (issue #44: "no false flags of ordinary fixes").

A case is one non-merge commit whose subject or body says it fixes something, that changes
1-3 library .py files by at most MAX_LINES lines and at least one test file. Written per case:

    cases/<id>/case.json   repo, commit, parent, subject, fail_to_pass (the test functions the
                           commit adds or edits, by their lines), tests_dirs
    cases/<id>/patch.diff  the commit's change to the library files (test files left out)
    cases/<id>/pre/<path>  each changed library file as the parent had it
    cases/<id>/tests/<path> each changed test file as the commit leaves it

Usage: mine.py OUT MIRROR... (each MIRROR a bare git directory, named owner+name by `fetch`);
PER_REPO cases at most per library, newest first. Deterministic for the same mirrors.
"""

import ast
import json
import os
import re
import subprocess
import sys

MAX_LINES = 40
PER_REPO = 25
MAX_FILE = 120_000
FIX = re.compile(r"\b(fix(e[sd])?|bug|regression|broken|incorrect(ly)?|wrong)\b", re.I)


def git(gd, *args):
    return subprocess.run(["git", "--git-dir", gd, *args], check=True,
                          capture_output=True).stdout.decode("utf-8", "replace")


def is_test(path):
    parts = path.split("/")
    name = parts[-1]
    return (any(p in ("test", "tests", "testing") for p in parts[:-1])
            or name.startswith("test_") or name.endswith("_test.py") or name == "conftest.py")


def is_library(path):
    if not path.endswith(".py") or is_test(path):
        return False
    top = path.split("/")[0]
    return top not in ("docs", "doc", "benchmarks", "bench", "examples", "scripts", "tools",
                       "setup.py", "noxfile.py", "conftest.py", "tasks.py", ".github")


def touched_tests(text, added):
    """Test function ids (Class::name or name) whose lines include an added line."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return []
    out = []

    def walk(body, prefix):
        for n in body:
            if isinstance(n, ast.ClassDef):
                walk(n.body, prefix + [n.name])
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and \
                    n.name.startswith("test"):
                if any(n.lineno <= a <= n.end_lineno for a in added):
                    out.append("::".join(prefix + [n.name]))
    walk(tree.body, [])
    return out


def added_lines(diff):
    lines, cur = [], None
    for l in diff.splitlines():
        m = re.match(r"^@@ -\d+(?:,\d+)? \+(\d+)", l)
        if m:
            cur = int(m.group(1))
            continue
        if cur is None or l.startswith(("+++", "---")):
            continue
        if l.startswith("+"):
            lines.append(cur)
            cur += 1
        elif l.startswith(" "):
            cur += 1
    return lines


def mine(out, gd, repo):
    n = 0
    shas = git(gd, "log", "--no-merges", "--format=%H", "HEAD").split()
    for sha in shas:
        if n >= PER_REPO:
            break
        msg = git(gd, "log", "-1", "--format=%B", sha)
        if not FIX.search(msg) or re.search(r"\b(typo|docs?|lint|flake8|mypy|typing)\b",
                                            msg.splitlines()[0], re.I):
            continue
        parents = git(gd, "log", "-1", "--format=%P", sha).split()
        if len(parents) != 1:
            continue
        parent = parents[0]
        stat = git(gd, "diff", "--numstat", "-M", parent, sha)
        lib, tests, other = [], [], 0
        for row in stat.splitlines():
            a, d, path = row.split("\t", 2)
            if a == "-" or "=>" in path:
                other += 1
                continue
            if path.endswith(".py") and is_test(path):
                tests.append(path)
            elif is_library(path):
                lib.append((path, int(a) + int(d)))
        if not lib or not tests or len(lib) > 3 or sum(c for _, c in lib) > MAX_LINES:
            continue
        try:
            pre = {p: git(gd, "show", "%s:%s" % (parent, p)) for p, _ in lib}
        except subprocess.CalledProcessError:
            continue  # a new file: nothing to compare with
        if any(len(t) > MAX_FILE for t in pre.values()):
            continue
        patch = git(gd, "diff", "--no-color", "-U3", parent, sha, "--", *[p for p, _ in lib])
        fail = []
        post_tests = {}
        for t in tests:
            try:
                text = git(gd, "show", "%s:%s" % (sha, t))
            except subprocess.CalledProcessError:
                continue
            if len(text) > MAX_FILE:
                continue
            d = git(gd, "diff", "--no-color", "-U0", parent, sha, "--", t)
            ids = touched_tests(text, added_lines(d))
            if ids:
                post_tests[t] = text
                fail += ["%s::%s" % (t, i) for i in ids]
        if not fail:
            continue
        cid = "%s-%s" % (repo.split("/")[1], sha[:10])
        d = os.path.join(out, "cases", cid)
        for p, text in pre.items():
            os.makedirs(os.path.dirname(os.path.join(d, "pre", p)), exist_ok=True)
            with open(os.path.join(d, "pre", p), "w") as f:
                f.write(text)
        for p, text in post_tests.items():
            os.makedirs(os.path.dirname(os.path.join(d, "tests", p)), exist_ok=True)
            with open(os.path.join(d, "tests", p), "w") as f:
                f.write(text)
        with open(os.path.join(d, "patch.diff"), "w") as f:
            f.write(patch)
        dirs = sorted({t.rsplit("/", 1)[0] if "/" in t else "." for t in post_tests})
        with open(os.path.join(d, "case.json"), "w") as f:
            json.dump({"repo": repo, "commit": sha, "parent": parent,
                       "subject": msg.splitlines()[0][:200], "fail_to_pass": fail,
                       "tests_dirs": dirs}, f, indent=1)
            f.write("\n")
        n += 1
    return n


def main():
    out = sys.argv[1]
    for gd in sys.argv[2:]:
        name = os.path.basename(os.path.dirname(gd.rstrip("/"))).replace("+", "/", 1)
        print("%-45s %d" % (name, mine(out, gd, name)))


if __name__ == "__main__":
    main()
