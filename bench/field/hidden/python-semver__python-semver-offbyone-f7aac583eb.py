"""Hidden check: a match expression without an operator is an equality, for one-digit and
longer major versions alike"""

import pytest

from semver import Version


def test_bare_version_is_equality():
    assert Version.parse("3.4.5").match("3.4.5") is True
    assert Version.parse("3.4.5").match("3.4.6") is False
    assert Version.parse("10.0.0").match("10.0.0") is True


def test_bare_garbage_still_raises():
    with pytest.raises(ValueError):
        Version.parse("3.4.5").match("x3.4.5")
