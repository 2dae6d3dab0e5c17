"""Hidden check: backoff with factor 1.0"""

import pytest

from boltons.iterutils import backoff, backoff_iter


def test_equal_bounds_yield_once():
    assert list(backoff_iter(2, 2, factor=1.0)) == [2.0]
    assert backoff(3, 3, factor=1.0) == [3.0]


def test_unequal_bounds_are_refused():
    with pytest.raises(ValueError):
        list(backoff_iter(1, 4, factor=1.0))


def test_default_factor_unchanged():
    assert backoff(1, 8) == [1.0, 2.0, 4.0, 8.0]
