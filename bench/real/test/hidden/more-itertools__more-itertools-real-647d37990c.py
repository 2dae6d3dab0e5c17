"""Hidden check: interleave_evenly() of no iterables yields nothing"""

from more_itertools import interleave_evenly


def test_no_iterables():
    assert list(interleave_evenly(())) == []
    assert list(interleave_evenly((), lengths=())) == []


def test_no_iterables_from_generator():
    assert list(interleave_evenly(x for x in [])) == []


def test_non_empty_unchanged():
    assert list(interleave_evenly([[1, 2], [3]])) == [1, 2, 3]
    assert list(interleave_evenly([[1, 2, 3, 4], ["a", "b"]])) == [1, 2, "a", 3, 4, "b"]
