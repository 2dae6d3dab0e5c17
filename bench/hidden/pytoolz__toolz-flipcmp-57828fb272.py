"""Hidden check: join: an inner join pairs only matching keys"""

from toolz import join


def test_inner_join_on_computed_keys():
    left = ["a", "bb", "ccc"]
    right = ["xx", "y", "zzzz", "qq"]
    assert sorted(join(len, left, len, right)) == [("a", "y"), ("bb", "qq"), ("bb", "xx")]


def test_inner_join_without_matches_is_empty():
    assert list(join(0, [(1, "l")], 0, [(2, "r"), (3, "s")])) == []
