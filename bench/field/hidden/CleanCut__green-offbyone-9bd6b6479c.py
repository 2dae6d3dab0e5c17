"""Hidden check: InitializerOrFinalizer splits a dotted path into module and function and runs that function"""

import sys
import types

import pytest

from green.exceptions import InitializerOrFinalizerError
from green.runner import InitializerOrFinalizer


def _install_module(name, **attrs):
    module = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(module, key, value)
    sys.modules[name] = module
    return module


def test_dotted_path_is_split_at_last_dot():
    runner = InitializerOrFinalizer("pkg_alpha.sub_beta.setup_worker")
    assert runner.module_part == "pkg_alpha.sub_beta"
    assert runner.function_part == "setup_worker"


def test_function_in_injected_module_is_called():
    calls = []
    _install_module("hidden_green_initmod", start_worker=lambda: calls.append("start"))
    try:
        InitializerOrFinalizer("hidden_green_initmod.start_worker")()
    finally:
        del sys.modules["hidden_green_initmod"]
    assert calls == ["start"]


def test_stdlib_function_with_nested_module_runs():
    runner = InitializerOrFinalizer("json.decoder.JSONDecoder")
    assert runner.module_part == "json.decoder"
    assert runner.function_part == "JSONDecoder"
    runner()  # zero-argument callable in a nested stdlib module; must not raise


def test_missing_function_still_reports_error():
    _install_module("hidden_green_emptymod")
    try:
        with pytest.raises(InitializerOrFinalizerError):
            InitializerOrFinalizer("hidden_green_emptymod.nothing_here")()
    finally:
        del sys.modules["hidden_green_emptymod"]
