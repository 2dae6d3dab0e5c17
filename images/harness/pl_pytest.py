# patchloop: which pytest runs a project's tests, chosen one way for the verifier's hardened run
# (pl_run.py is sent with this file prepended), the agent's run_tests, the candidates' checks,
# the post-submit check and prepare's collection check (this file plus a `_pl_main(...)` call,
# run as `python -c`). The project's pytest when it imports, is at least 6.2 (the oldest the
# harness and its guard drive) and `check` accepts it; otherwise the harness's own copy in
# /opt/patchloop/harness-site (images/base/setup.sh), which no dependency install can replace.
# Defines names only: nothing here imports project code.
import os as _pl_os
import sys as _pl_sys

HARNESS_SITE = "/opt/patchloop/harness-site"
MIN_PYTEST = (6, 2)


def _pl_version(v):
    out = []
    for part in str(v).split(".")[:2]:
        digits = ""
        for ch in part:
            if not ch.isdigit():
                break
            digits += ch
        out.append(int(digits or 0))
    return tuple(out)


def _pl_use_harness_site(forget=()):
    """Forget whatever the failed import loaded and put the harness's site first."""
    tops = set(forget)
    for name in _pl_os.listdir(HARNESS_SITE):
        if not name.endswith((".dist-info", ".egg-info")):
            tops.add(name[:-3] if name.endswith(".py") else name)
    for mod in list(_pl_sys.modules):
        if mod.split(".")[0] in tops:
            del _pl_sys.modules[mod]
    at = next(
        (i for i, p in enumerate(_pl_sys.path) if p.endswith(("site-packages", "dist-packages"))),
        len(_pl_sys.path),
    )
    _pl_sys.path.insert(at, HARNESS_SITE)


# The sandbox runs every test command with PYTHONHASHSEED=0 (src/sandbox/policy.rs); `python3
# -I` ignores it, so set iteration order, and with it the ids pytest gives parameters drawn from
# a set (`test_date[expected18]`), would differ between the verifier's before and after runs.
_PL_PY_ENV_KEPT = ("PYTHONHASHSEED", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED")
_PL_STASH = "_PATCHLOOP_STASHED_PYTHON_ENV"


def _pl_seed_hashes():
    """Call first, before stdin is read. Under `-I` with randomized hashes, run this same
    `-c` source again with PYTHONHASHSEED=0: `-s -P` instead of `-I` (no user site, no script
    directory on sys.path) and every other PYTHON* variable held back from the interpreter and
    put back into os.environ once it runs, so the code under test sees the environment it had.
    Stdin goes along in a memfd; exec keeps the pid (a time limit that kills it kills the run).
    Python < 3.11 (no `-P`) keeps the random seed."""
    import json as _json

    env = _pl_os.environ
    if not _pl_sys.flags.hash_randomization:
        stashed = env.pop(_PL_STASH, None)
        if stashed is not None:
            env.update(_json.loads(stashed))
        return
    argv = list(getattr(_pl_sys, "orig_argv", ()))
    if (not _pl_sys.flags.isolated or _pl_sys.version_info < (3, 11) or "-c" not in argv
            or not hasattr(_pl_os, "memfd_create")):
        return
    source = argv[argv.index("-c") + 1]
    flags = ["-s", "-P"] + (["-B"] if _pl_sys.flags.dont_write_bytecode else []) + (
        ["-S"] if _pl_sys.flags.no_site else [])
    child = {k: v for k, v in env.items() if not k.startswith("PYTHON") or k in _PL_PY_ENV_KEPT}
    child[_PL_STASH] = _json.dumps(
        {k: v for k, v in env.items() if k.startswith("PYTHON") and k not in _PL_PY_ENV_KEPT})
    child["PYTHONHASHSEED"] = "0"
    data = _pl_sys.stdin.buffer.read()
    fd = _pl_os.memfd_create("pl-stdin")
    view = memoryview(data)
    while view:
        view = view[_pl_os.write(fd, view):]
    _pl_os.lseek(fd, 0, 0)
    _pl_os.dup2(fd, 0)
    _pl_os.close(fd)
    _pl_sys.stdout.flush()
    _pl_os.execve(_pl_sys.executable,
                  [_pl_sys.executable] + flags + ["-c", source] + _pl_sys.argv[1:], child)


def choose_pytest(check=None, forget=()):
    """(pytest module, "project" | "harness", why the project's was not used, check's result).
    `check` runs after the import (the verifier loads its guard there); an exception from the
    import, the version test or `check` means the harness's pytest; `forget` names modules
    `check` loaded that must be loaded again with it."""
    try:
        import pytest

        found = getattr(pytest, "__version__", "unknown")
        if _pl_version(found) < MIN_PYTEST:
            raise ImportError(
                "pytest %s is older than %d.%d, the oldest the harness drives" % ((found,) + MIN_PYTEST))
        return pytest, "project", "", (check() if check else None)
    except Exception as e:
        if not _pl_os.path.isdir(HARNESS_SITE):
            raise
        try:
            import importlib.metadata

            installed = " %s" % importlib.metadata.version("pytest")
        except Exception:
            installed = ""
        why = "the project's pytest%s is not usable: %s: %s" % (
            installed,
            type(e).__name__,
            str(e).splitlines()[0] if str(e) else "",
        )
        _pl_use_harness_site(forget)
        import pytest

        return pytest, "harness", why, (check() if check else None)


def _pl_main(cwd_on_path=True):
    """`python -c <this file + _pl_main()> ARGS`: pytest.main(ARGS) with the chosen pytest; the
    first output line says which (run_tests shows it to the model)."""
    if not cwd_on_path and "" in _pl_sys.path:
        # The `pytest` console script does not put the working directory on sys.path.
        _pl_sys.path.remove("")
    pytest, runner, why, _ = choose_pytest()
    print("patchloop: pytest %s %s%s" % (
        runner, getattr(pytest, "__version__", "unknown"), " (%s)" % why if why else ""), flush=True)
    _pl_sys.exit(int(pytest.main(_pl_sys.argv[1:])))
