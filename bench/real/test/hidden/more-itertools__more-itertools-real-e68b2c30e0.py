"""Hidden check: split_before/split_after/split_when with maxsplit=0 yield nothing for empty input"""

from more_itertools import split_after, split_before, split_when


def test_split_before_empty():
    assert list(split_before(iter([]), lambda x: x == 1, maxsplit=0)) == []
    assert list(split_before((), str.isupper, maxsplit=0)) == []


def test_split_after_empty():
    assert list(split_after(iter(()), lambda x: x > 2, maxsplit=0)) == []


def test_split_when_empty():
    assert list(split_when(iter([]), lambda a, b: a < b, maxsplit=0)) == []


def test_non_empty_kept_whole():
    assert list(split_before([1, 2], bool, maxsplit=0)) == [[1, 2]]
    assert list(split_after("ab", bool, maxsplit=0)) == [["a", "b"]]
    assert list(split_when([3, 1], lambda a, b: a > b, maxsplit=0)) == [[3, 1]]
