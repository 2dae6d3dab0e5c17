"""Hidden check: sliced() rejects negative slice sizes"""

import pytest

from more_itertools import sliced


def test_negative_size_raises():
    with pytest.raises(ValueError):
        list(sliced("abcdef", -2))
    with pytest.raises(ValueError):
        list(sliced([1, 2, 3], -1))


def test_negative_size_raises_with_strict():
    with pytest.raises(ValueError):
        list(sliced((1, 2, 3, 4), -4, strict=True))


def test_positive_sizes_unchanged():
    assert list(sliced((1, 2, 3, 4, 5), 2)) == [(1, 2), (3, 4), (5,)]
    assert list(sliced("xyz", 5)) == ["xyz"]
