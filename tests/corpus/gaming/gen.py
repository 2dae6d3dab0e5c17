#!/usr/bin/env python3
"""Regenerate cases/<id>/ from the definitions in defs/*.py.

Each definition names a bug (a bench task from bench/tasks.jsonl, or edits of our own to the
pristine sdist), its gold fix and the case's patch as edits (exact substring replacements, new
files); this script applies them to a scratch copy and writes real `git diff`s, case.json and
wrong_on.py. fail_to_pass comes from the task, or (own bugs) is every test that passes on the
pristine tree and fails on the buggy one. Then run check.py to prove each case.

    python3 tests/corpus/gaming/gen.py            # every case
    python3 tests/corpus/gaming/gen.py ID [ID ...]
    python3 tests/corpus/gaming/gen.py --list
"""
import argparse
import importlib
import json
import os
import re
import shutil
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "defs"))

import check  # noqa: E402
from dsl import SOURCES  # noqa: E402

TASKS = os.path.join(check.REPO, "bench", "tasks.jsonl")
P2P_SAMPLE = 8


def load_defs():
    cases = []
    for name in sorted(os.listdir(os.path.join(HERE, "defs"))):
        if name.endswith(".py") and name != "dsl.py" and not name.startswith("_"):
            mod = importlib.import_module(name[:-3])
            cases.extend(mod.CASES)
    ids = [c.id for c in cases]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit("duplicate case ids: %s" % ", ".join(sorted(dup)))
    return cases


def tasks():
    with open(TASKS) as f:
        return {t["instance_id"]: t for t in map(json.loads, f)}


def clean_diff(text):
    # `index` lines carry blob hashes nobody needs; the bench diffs have none either.
    return "".join(l for l in text.splitlines(True) if not l.startswith("index "))


def diff_of(tree, edits):
    tree.reset()
    for e in edits:
        e.apply(tree.root)
    tree.git("add", "-A")
    d = clean_diff(tree.git("diff", "--cached"))
    tree.git("reset", "-q")
    return d


class BugState:
    """The buggy tree's diffs and test outcomes, computed once per bug."""

    def __init__(self, bug, all_tasks, py, plugin_dir, work):
        self.bug = bug
        source = SOURCES[bug.library]
        self.source = source
        self.base = check.baseline(source, "python -m pytest", py, plugin_dir)
        self.tree = check.Tree(work, source, py, plugin_dir)
        if bug.task:
            t = all_tasks[bug.task]
            self.bug_diff = t["bug_patch"]
            self.tree.apply(self.bug_diff, "bug")
            self.tree.commit("buggy")
            self.gold_diff = t["patch"] if bug.gold is None else diff_of(self.tree, bug.gold)
            self.f2p = list(t["FAIL_TO_PASS"])
            p2p = [x for x in t["PASS_TO_PASS"] if x in self.base]
        else:
            for e in bug.edits:
                e.apply(self.tree.root)
            self.tree.git("add", "-A")
            self.bug_diff = clean_diff(self.tree.git("diff", "--cached"))
            self.tree.commit("buggy")
            res = self.tree.pytest("python -m pytest")
            failing = sorted(x for x in self.base if res.get(x) != "passed")
            if bug.f2p:
                # Tests that fail only after others in the same session (shared state) are
                # left out: fail_to_pass must fail when run on its own.
                missing = [x for x in bug.f2p if x not in failing]
                if missing:
                    raise SystemExit("f2p tests that pass on the buggy tree: %s" % missing)
                failing = list(bug.f2p)
            if not failing:
                raise SystemExit("a bug of %s breaks no test: %s"
                                 % (bug.library, [e.old[:60] for e in bug.edits]))
            self.f2p = failing
            p2p = sorted(x for x in self.base if res.get(x) == "passed")
            self.gold_diff = diff_of(self.tree, bug.gold)
        self.p2p = sample_p2p(self.f2p, p2p)


def spread(xs, n):
    """n items evenly spaced through xs (all of them if there are fewer)."""
    if len(xs) <= n:
        return list(xs)
    return [xs[i * len(xs) // n] for i in range(n)]


def sample_p2p(f2p, p2p):
    """Passing tests nearest the failing ones: same test function first, then same file."""
    f2p_set = set(f2p)
    p2p = [x for x in p2p if x not in f2p_set]
    funcs = {x.split("[")[0] for x in f2p}
    files = {x.split("::")[0] for x in f2p}
    same_func = [x for x in p2p if x.split("[")[0] in funcs]
    same_file = [x for x in p2p if x.split("::")[0] in files and x not in same_func]
    rest = [x for x in p2p if x not in same_func and x not in same_file]
    pick = spread(same_func, P2P_SAMPLE // 2)
    pick += spread(same_file, P2P_SAMPLE - len(pick))
    pick += spread(rest, P2P_SAMPLE - len(pick))
    return pick


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("ids", nargs="*")
    ap.add_argument("--list", action="store_true", help="list the defined cases")
    args = ap.parse_args()
    cases = load_defs()
    if args.list:
        for c in cases:
            print("%-52s %-8s %s" % (c.id, c.kind, c.cls))
        return
    if args.ids:
        known = {c.id for c in cases}
        unknown = [i for i in args.ids if i not in known]
        if unknown:
            sys.exit("no such case: %s" % ", ".join(unknown))
        cases = [c for c in cases if c.id in args.ids]
    py = check.python_with_pytest()
    plugin_dir = tempfile.mkdtemp(prefix="gaming-plugin-")
    with open(os.path.join(plugin_dir, "gaming_outcomes.py"), "w") as f:
        f.write(check.PLUGIN)
    all_tasks = tasks()
    states = {}
    work = tempfile.mkdtemp(prefix="gaming-gen-")
    try:
        for c in cases:
            key = id(c.bug)
            if key not in states:
                states[key] = BugState(c.bug, all_tasks, py, plugin_dir,
                                       os.path.join(work, str(len(states))))
            st = states[key]
            patch = diff_of(st.tree, c.patch)
            out = os.path.join(check.CASES, c.id)
            os.makedirs(out, exist_ok=True)
            meta = {
                "library": c.bug.library,
                "source": st.source,
                "bug": "bug.diff",
                "fail_to_pass": st.f2p,
                "pass_to_pass_sample": st.p2p,
                "kind": c.kind,
                "class": c.cls,
                "wrong_on": c.wrong_on,
                "test_command": "python -m pytest",
            }
            if c.bug.task:
                meta["bench_task"] = c.bug.task
            files = {"case.json": json.dumps(meta, indent=2) + "\n", "bug.diff": st.bug_diff,
                     "gold.diff": st.gold_diff, "patch.diff": patch, "wrong_on.py": c.check}
            for name, text in files.items():
                with open(os.path.join(out, name), "w") as f:
                    f.write(text)
            print("wrote %-52s %-8s %-22s f2p=%d" % (c.id, c.kind, c.cls, len(st.f2p)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(plugin_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
