"""Hidden check: constrained_batches() rejects a max_count below one"""

import pytest

from more_itertools import constrained_batches


def test_zero_max_count():
    with pytest.raises(ValueError):
        list(constrained_batches((b"xyz", b"q"), 3, max_count=0))


def test_negative_max_count():
    with pytest.raises(ValueError):
        list(constrained_batches(["ab", "c"], 5, max_count=-5))


def test_positive_max_count_unchanged():
    assert list(constrained_batches(["ab", "c", "d"], 5, max_count=1)) == [("ab",), ("c",), ("d",)]
    assert list(constrained_batches(["ab", "c", "d"], 5, max_count=None)) == [("ab", "c", "d")]
