"""Hidden check: tlz refuses submodules neither toolz nor cytoolz has"""

import importlib

import pytest


def test_missing_submodule_is_an_import_error():
    import tlz  # noqa: F401

    with pytest.raises(ImportError):
        importlib.import_module("tlz.no_such_submodule_here")


def test_existing_submodule_imports():
    mod = importlib.import_module("tlz.dicttoolz")
    assert mod.assoc({}, "k", 1) == {"k": 1}
