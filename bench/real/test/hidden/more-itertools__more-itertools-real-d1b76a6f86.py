"""Hidden check: chunked() rejects a negative size when called; ichunked(…, 0) yields nothing"""

import pytest

from more_itertools import chunked, ichunked


def test_chunked_negative_raises_at_call_time():
    with pytest.raises(ValueError):
        chunked([1, 2, 3], -2)
    with pytest.raises(ValueError):
        chunked(iter("abc"), -1, strict=True)


def test_ichunked_zero_is_empty():
    assert list(ichunked(iter([4, 5]), 0)) == []
    assert list(ichunked("", 0)) == []


def test_positive_sizes_unchanged():
    assert list(chunked(range(5), 2)) == [[0, 1], [2, 3], [4]]
    assert [list(c) for c in ichunked(range(7), 3)] == [[0, 1, 2], [3, 4, 5], [6]]
