# patchloop hardened pytest run. Executed as `python3 -I -c <this file>`; its configuration
# arrives as JSON on stdin (never from the environment or the workspace):
#   {"workspace", "paths", "ini_text", "out_dir", "guard_src", "args", "ids", "env"}
# This file runs after pl_pytest.py (prepended by the verifier), which defines `choose_pytest`.
# -I drops PYTHONPATH, PYTHON* variables, user site and the script directory, so the workspace
# is only *appended* to sys.path: a `pytest/` or `json.py` in the repository cannot shadow the
# real one. The pytest configuration is the harness's copy of the pre-patch one (`-c`).
import hashlib
import json
import os
import sys
import types

_pl_seed_hashes()  # pl_pytest.py: the sandbox's PYTHONHASHSEED=0 under -I
# A private copy of stdout taken before any project code runs: the final marker line goes
# there, so a later print() by the code under test cannot be mistaken for it.
_OUT = os.dup(1)
cfg = json.loads(sys.stdin.buffer.read())
sys.stdin = open(os.devnull)
for key in ("PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
    os.environ.pop(key, None)
# The test command's own assignments (`CI=1 pytest`), minus any that steer the interpreter,
# pytest or the loader (the harness filtered them: src/testcmd).
for key, value in cfg.get("env", {}).items():
    os.environ[key] = value

ws = cfg["workspace"]
for p in cfg["paths"]:
    if p not in sys.path:
        sys.path.append(p)

out = cfg["out_dir"]
# World-readable: the harness's read-only helper (another uid) collects the reports.
os.makedirs(out, mode=0o755)
ini = os.path.join(out, "harness.ini")
with open(ini, "w") as f:
    f.write(cfg["ini_text"])

def _load_guard():
    guard = types.ModuleType("pl_guard")
    guard.__file__ = "<patchloop harness>/pl_guard.py"
    exec(compile(cfg["guard_src"], guard.__file__, "exec"), guard.__dict__)
    guard.REPORT_PATH = os.path.join(out, "guard.json")
    guard.WORKSPACE = ws
    sys.modules["pl_guard"] = guard
    # The per-test outcome stream goes to the private stdout copy too (see pl_guard.install_stream).
    guard.install_stream(_OUT, cfg.get("nonce", "-"))
    return guard


# Which pytest: the project's when usable, else the harness's own (`choose_pytest`, prepended
# from pl_pytest.py: the same choice run_tests makes); the marker line says which ran and why.
# The guard is loaded by the check, so a pytest the guard cannot hook falls back too.
pytest, runner, why, guard = choose_pytest(check=_load_guard, forget=("pl_guard",))

os.chdir(ws)
# Test ids are selected after collection, from their files: pytest ends a whole run with
# "not found" (exit 4) for one id it cannot collect (a linter plugin's item that only the
# project's own command enables), and every other id's outcome would be lost with it. An id
# not collected is simply absent from the report; the verifier decides what that means.
ids = list(cfg["ids"])
wanted = None
if ids and all("::" in i for i in ids):
    wanted = set(ids)
    # A file that is not there is no id either (pytest would end the run for it too).
    ids = [f for f in dict.fromkeys(i.split("::", 1)[0] for i in ids)
           if os.path.exists(os.path.join(ws, f))]


class _Select:
    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, session, config, items):
        kept = [it for it in items if it.nodeid in wanted]
        dropped = [it for it in items if it.nodeid not in wanted]
        if dropped:
            config.hook.pytest_deselected(items=dropped)
        items[:] = kept


args = [
    "-c", ini,
    "--rootdir", ws,
    "--confcutdir", ws,
    "-p", "no:cacheprovider",
    "--junitxml", os.path.join(out, "junit.xml"),
    "-o", "junit_family=xunit2",
    "-o", "junit_logging=no",
    "--continue-on-collection-errors",
] + cfg["args"] + ids
# Registered as an object (not `-p`): a `-p` module already imported triggers an assertion-rewrite
# warning, which a project's `filterwarnings = error` would turn into a failed run.
# sys.argv as `python -m pytest ARGS` (and run_tests' `python -c … ARGS`) have it: a test that
# reads sys.argv (a CLI's `main(argv=None)`) must see the same in every run.
sys.argv[1:] = args
rc = int(pytest.main(args, plugins=[guard] + ([_Select()] if wanted else [])))


def _digest(name):
    try:
        with open(os.path.join(out, name), "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return "-"


# Fingerprints of the reports as they were when pytest returned; the harness compares them with
# the files it collects, so nothing that runs later (atexit, a forked child) can rewrite them.
# os._exit skips atexit handlers and lingering threads entirely.
line = "@@PATCHLOOP-RUN@@ rc=%d junit=%s guard=%s pytest=%s:%s why=%s\n" % (
    rc,
    _digest("junit.xml"),
    _digest("guard.json"),
    runner,
    getattr(pytest, "__version__", "unknown").replace(" ", "_"),
    why.encode("utf-8", "replace").hex() or "-",
)
try:
    sys.stdout.flush()
    sys.stderr.flush()
except Exception:
    pass
os.write(_OUT, line.encode())
os._exit(rc)
