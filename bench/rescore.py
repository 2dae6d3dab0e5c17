#!/usr/bin/env python3
"""Re-run the current hidden checks on the verified patches of recorded eval runs.

A hidden check that is strengthened after a run (it had accepted a wrong fix) changes what
that run resolved; this tool says by how much, for every run given, so that runs made before
and after the change are compared under the same checks. It is an audit on the host, not the
eval's container: each task's snapshot is extracted, its bug_patch and the run's patch applied
with `git apply`, and the check run with pytest (`PYTEST`, default `python3 -m pytest`) from a
temporary folder under an empty pytest.ini, the tree on PYTHONPATH. Only use it on patches
you are willing to run on this machine (they already ran in the sandbox when recorded).

usage: bench/rescore.py RESULTS_DIR RUN_ID... [--gold]
  RESULTS_DIR  the `--results` folder of `patchloop eval` (RUN_ID/episodes/*__0.json)
  --gold       also show each check on the buggy tree (must fail) and with the gold patch
               (must pass)
Prints one line per verified episode whose outcome the current check changes, then per run:
resolved as recorded, and resolved under the current checks.
"""
import glob, json, os, shlex, shutil, subprocess, sys, tarfile, tempfile

BENCH = os.path.dirname(os.path.abspath(__file__))
PYTEST = shlex.split(os.environ.get("PYTEST", f"{sys.executable} -m pytest"))


def load_tasks():
    tasks = {}
    for sub in ("", "real"):
        base = os.path.join(BENCH, sub)
        for line in open(os.path.join(base, "tasks.jsonl")):
            t = json.loads(line)
            tasks[t["instance_id"]] = (t, os.path.join(base, "sources"), os.path.join(base, "hidden"))
    return tasks


def buggy_tree(task, sources, work):
    tree = os.path.join(work, "tree")
    shutil.rmtree(tree, ignore_errors=True)
    os.makedirs(tree)
    tar = os.path.join(sources, f"{task['repo'].replace('/', '+')}-{task['base_commit'][:12]}.tar.gz")
    with tarfile.open(tar) as z:
        z.extractall(tree, filter="data")
    subprocess.run(["git", "init", "-q", "."], cwd=tree, check=True)
    subprocess.run(["git", "apply", "-"], cwd=tree, input=task["bug_patch"].encode(), check=True)
    return tree


def run_check(tree, check, work, patch=None):
    if patch:
        r = subprocess.run(["git", "apply", "-"], cwd=tree, input=patch.encode(), capture_output=True)
        if r.returncode:
            return "noapply"
    d = os.path.join(work, "check")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    open(os.path.join(d, "pytest.ini"), "w").write("[pytest]\n")
    shutil.copy(check, os.path.join(d, "test_hidden.py"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([tree, os.path.join(tree, "src")]))
    r = subprocess.run(PYTEST + ["-q", "-p", "no:cacheprovider", "test_hidden.py"], cwd=d, env=env,
                       capture_output=True, timeout=300)
    return "passed" if r.returncode == 0 else "failed"


def main(argv):
    args = [a for a in argv if not a.startswith("--")]
    if len(args) < 2:
        sys.exit(__doc__)
    results, runs, gold = args[0], args[1:], "--gold" in argv
    tasks = load_tasks()
    with tempfile.TemporaryDirectory() as work:
        for run in runs:
            eps = sorted(glob.glob(os.path.join(results, run, "episodes", "*__0.json")))
            if not eps:
                sys.exit(f"{run}: no episodes under {results}/{run}/episodes")
            recorded = now = 0
            for f in eps:
                e = json.load(open(f))
                recorded += bool(e["resolved"])
                task, sources, hidden = tasks[e["instance_id"]]
                check = os.path.join(hidden, e["instance_id"] + ".py")
                if e["verdict"] != "verified" or not os.path.exists(check):
                    now += bool(e["resolved"])
                    continue
                got = run_check(buggy_tree(task, sources, work), check, work, e["patch"])
                now += got == "passed"
                if (got == "passed") != bool(e["resolved"]):
                    print(f"{run} {e['instance_id']}: recorded {e['hidden_check']}, now {got}")
                if gold:
                    b = run_check(buggy_tree(task, sources, work), check, work)
                    g = run_check(buggy_tree(task, sources, work), check, work, task["patch"])
                    print(f"   {e['instance_id']}: buggy {b} (must fail), gold {g} (must pass)")
            print(f"{run}: {recorded} of {len(eps)} resolved as recorded, {now} under the current checks")


if __name__ == "__main__":
    main(sys.argv[1:])
