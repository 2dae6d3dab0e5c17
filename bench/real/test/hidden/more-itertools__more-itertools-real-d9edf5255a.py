"""Hidden check: bucket lookups do not invent keys; falsy validators are honoured"""

from more_itertools import bucket


class OnlyA(set):
    """A validator that is an empty (so falsy) set."""

    def __call__(self, value):
        return value == "a"


def test_membership_test_does_not_add_key():
    b = bucket(["a1", "b2", "a3"], key=lambda s: s[0])
    assert ("x" in b) is False
    assert sorted(b) == ["a", "b"]


def test_missing_getitem_does_not_add_key():
    b = bucket(["a1", "b2"], key=lambda s: s[0])
    assert list(b["z"]) == []
    assert sorted(b) == ["a", "b"]


def test_falsy_validator_is_used():
    b = bucket(["a1", "b2", "a3"], key=lambda s: s[0], validator=OnlyA())
    assert list(b["a"]) == ["a1", "a3"]
    assert list(b["b"]) == []


def test_normal_grouping_unchanged():
    b = bucket([10, 21, 30, 41], key=lambda n: n % 2)
    assert list(b[1]) == [21, 41]
    assert list(b[0]) == [10, 30]
