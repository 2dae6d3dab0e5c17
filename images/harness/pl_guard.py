"""patchloop verification guard: a pytest plugin that checks pytest is still pytest.

Code under test runs in the same interpreter as pytest, so it can replace pytest's internals
(docs/security.md class I: ``_pytest.python.Function.runtest = lambda self: None`` makes every test
"pass"). This plugin is imported before any project code, remembers the objects that decide
outcomes, records every test report itself, and at the end of the session compares the objects
again. It writes a JSON report the harness reads after the process exits:

    {"status": "clean" | "tampered", "findings": [...], "outcomes": {nodeid: outcome},
     "conftests": {path: sha256}, "exitstatus": int}

A missing report means the process died before the session finished (``os._exit``, a crash).
"""

import builtins
import hashlib
import json
import os
import sys
import unittest

import _pytest.config
import _pytest.fixtures
import _pytest.junitxml
import _pytest.main
import _pytest.outcomes
import _pytest.python
import _pytest.reports
import _pytest.runner
import _pytest.skipping
import _pytest.unittest
import pluggy
import pytest

REPORT_PATH = None
WORKSPACE = "/workspace"

try:  # pluggy >= 1.0
    import pluggy._callers as _pl_callers
    import pluggy._hooks as _pl_hooks
    import pluggy._manager as _pl_manager
except ImportError:  # pragma: no cover - older pluggy layouts
    _pl_callers = _pl_hooks = _pl_manager = None


def _watched():
    """(label, owner, attribute) of everything whose replacement would change outcomes."""
    items = [
        ("_pytest.python.Function.runtest", _pytest.python.Function, "runtest"),
        ("_pytest.python.Function.setup", _pytest.python.Function, "setup"),
        ("_pytest.python.pytest_pyfunc_call", _pytest.python, "pytest_pyfunc_call"),
        ("_pytest.runner.call_and_report", _pytest.runner, "call_and_report"),
        ("_pytest.runner.call_runtest_hook", _pytest.runner, "call_runtest_hook"),
        ("_pytest.runner.runtestprotocol", _pytest.runner, "runtestprotocol"),
        ("_pytest.runner.pytest_runtest_protocol", _pytest.runner, "pytest_runtest_protocol"),
        ("_pytest.runner.pytest_runtest_makereport", _pytest.runner, "pytest_runtest_makereport"),
        ("_pytest.runner.check_interactive_exception", _pytest.runner, "check_interactive_exception"),
        ("_pytest.runner.CallInfo.from_call", _pytest.runner.CallInfo, "from_call"),
        ("_pytest.reports.TestReport.from_item_and_call", _pytest.reports.TestReport, "from_item_and_call"),
        ("_pytest.reports.TestReport.__init__", _pytest.reports.TestReport, "__init__"),
        ("_pytest.reports.BaseReport.passed", _pytest.reports.BaseReport, "passed"),
        ("_pytest.reports.BaseReport.failed", _pytest.reports.BaseReport, "failed"),
        ("_pytest.main.pytest_runtestloop", _pytest.main, "pytest_runtestloop"),
        ("_pytest.main.Session.perform_collect", _pytest.main.Session, "perform_collect"),
        ("_pytest.skipping.pytest_runtest_makereport", _pytest.skipping, "pytest_runtest_makereport"),
        ("_pytest.skipping.pytest_runtest_setup", _pytest.skipping, "pytest_runtest_setup"),
        ("_pytest.skipping.evaluate_skip_marks", _pytest.skipping, "evaluate_skip_marks"),
        ("_pytest.outcomes.skip", _pytest.outcomes, "skip"),
        ("_pytest.outcomes.fail", _pytest.outcomes, "fail"),
        ("_pytest.outcomes.exit", _pytest.outcomes, "exit"),
        ("_pytest.outcomes.xfail", _pytest.outcomes, "xfail"),
        ("_pytest.junitxml.LogXML.pytest_runtest_logreport", _pytest.junitxml.LogXML, "pytest_runtest_logreport"),
        ("_pytest.junitxml.LogXML.pytest_sessionfinish", _pytest.junitxml.LogXML, "pytest_sessionfinish"),
        ("_pytest.junitxml._NodeReporter.append_failure", _pytest.junitxml._NodeReporter, "append_failure"),
        ("_pytest.junitxml._NodeReporter.append_pass", _pytest.junitxml._NodeReporter, "append_pass"),
        ("_pytest.unittest.TestCaseFunction.runtest", _pytest.unittest.TestCaseFunction, "runtest"),
        ("_pytest.fixtures.FixtureDef.execute", _pytest.fixtures.FixtureDef, "execute"),
        ("_pytest.config.Config.getoption", _pytest.config.Config, "getoption"),
        ("unittest.TestCase.run", unittest.TestCase, "run"),
        ("unittest.TestCase.__call__", unittest.TestCase, "__call__"),
        ("os._exit", os, "_exit"),
        ("sys.exit", sys, "exit"),
        ("builtins.AssertionError", builtins, "AssertionError"),
        ("builtins.__import__", builtins, "__import__"),
    ]
    if _pl_callers is not None:
        items += [
            ("pluggy._callers._multicall", _pl_callers, "_multicall"),
            ("pluggy._hooks._HookCaller.__call__", _pl_hooks._HookCaller, "__call__"),
            ("pluggy._manager.PluginManager._hookexec", _pl_manager.PluginManager, "_hookexec"),
        ]
    return items


def _get(owner, attr):
    # Class attributes through __dict__ where possible, so descriptors compare by identity.
    d = getattr(owner, "__dict__", {})
    if attr in d:
        return d[attr]
    return getattr(owner, attr, None)


_SNAPSHOT = [(label, owner, attr, _get(owner, attr)) for label, owner, attr in _watched()]
_MODULES = {name: sys.modules.get(name) for name in ("pytest", "_pytest", "_pytest.python", "_pytest.runner", "pluggy", "unittest")}
_OUTCOMES = {}
_SEVERITY = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
_STATE = {"plugins_at_start": None, "extra": []}


def _no_stream(nodeid, when, outcome):
    pass


# The outcome channel: pl_run.py replaces this with a writer to its private copy of stdout
# (taken before any project code ran), so each report leaves the process as it happens.
_STREAM = [_no_stream]


def install_stream(fd, nonce):
    def emit(nodeid, when, outcome):
        line = "@@PATCHLOOP-T@@ %s %s %s %s\n" % (nonce, when, outcome, json.dumps(nodeid))
        os.write(fd, line.encode())
    _STREAM[0] = emit


def _record(nodeid, outcome):
    old = _OUTCOMES.get(nodeid)
    if old is None or _SEVERITY[outcome] > _SEVERITY[old]:
        _OUTCOMES[nodeid] = outcome


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    when = report.when
    _STREAM[0](report.nodeid, when, "passed" if report.passed else "skipped" if report.skipped else "failed")
    if report.passed:
        if when == "call":
            _record(report.nodeid, "passed")
    elif report.skipped:
        _record(report.nodeid, "skipped")
    elif report.failed:
        _record(report.nodeid, "failed" if when == "call" else "error")


def pytest_sessionstart(session):
    pm = session.config.pluginmanager
    _STATE["plugins_at_start"] = {id(p) for p in pm.get_plugins()}


def _sha256(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError as e:
        return "unreadable: %s" % e


def _findings(session):
    found = []
    for label, owner, attr, original in _SNAPSHOT:
        if _get(owner, attr) is not original:
            found.append("%s was replaced" % label)
    for name, mod in _MODULES.items():
        if sys.modules.get(name) is not mod:
            found.append("sys.modules[%r] was replaced" % name)
    pm = session.config.pluginmanager
    start = _STATE["plugins_at_start"] or set()
    for plugin in pm.get_plugins():
        if id(plugin) in start:
            continue
        path = getattr(plugin, "__file__", None) or ""
        if os.path.basename(path) == "conftest.py":
            continue
        if path.startswith(WORKSPACE + "/") and "/test" not in path[len(WORKSPACE):]:
            found.append("code under test registered a pytest plugin: %s" % path)
    return found


def _conftests(session):
    out = {}
    for plugin in session.config.pluginmanager.get_plugins():
        path = getattr(plugin, "__file__", None) or ""
        if os.path.basename(path) == "conftest.py":
            out[path] = _sha256(path)
    return out


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    findings = _findings(session)
    report = {
        "status": "tampered" if findings else "clean",
        "findings": findings,
        "outcomes": dict(_OUTCOMES),
        "conftests": _conftests(session),
        "exitstatus": int(exitstatus),
        "collected": int(getattr(session, "testscollected", 0) or 0),
    }
    if REPORT_PATH:
        fd = os.open(REPORT_PATH, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)  # read by the helper (another uid)
        with os.fdopen(fd, "w") as f:
            json.dump(report, f)
