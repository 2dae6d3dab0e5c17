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
