"""Hidden check: environ's module __getattr__ serves the legacy metadata dunders and raises AttributeError for others"""

from importlib import metadata

import pytest

import environ


def test_unknown_dunders_behave_as_missing_attributes():
    assert hasattr(environ, "__author__") is False
    assert getattr(environ, "__license__", "n/a") == "n/a"
    with pytest.raises(AttributeError, match="module environ has no attribute no_such_name"):
        environ.no_such_name


def test_metadata_dunders_are_served_with_a_deprecation_warning():
    with pytest.warns(DeprecationWarning, match=r"Accessing environ_config\.__version__ is deprecated"):
        assert getattr(environ, "__version__", None) == metadata.version("environ-config")
    with pytest.deprecated_call():
        assert hasattr(environ, "__email__") is True


def test_from_import_of_metadata_dunder():
    with pytest.deprecated_call():
        from environ import __description__
    assert __description__ == metadata.metadata("environ-config")["Summary"]
