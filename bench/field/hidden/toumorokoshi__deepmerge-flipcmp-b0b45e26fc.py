"""Hidden check: append_unique (ExtendedSet membership) keeps only elements not already in the base list"""

from deepmerge import Merger
from deepmerge.extended_set import ExtendedSet
from deepmerge.strategy.list import ListStrategies


def _merger():
    return Merger([(list, ListStrategies.strategy_append_unique)], [], [])


def test_extended_set_membership():
    s = ExtendedSet(["x", ("t", 1), {"k": [1, 2]}, [7, 8]])
    assert "x" in s
    assert ("t", 1) in s
    assert {"k": [1, 2]} in s
    assert [7, 8] in s
    assert "y" not in s
    assert [8, 7] not in s
    assert {"k": [2, 1]} not in s


def test_append_unique_strings_skips_duplicates():
    merged = _merger().merge(["a", "b"], ["b", "c", "a", "d", "c"])
    assert merged == ["a", "b", "c", "d", "c"]


def test_append_unique_unhashable_elements():
    base = [[1, 2], {"name": "n"}]
    nxt = [[1, 2], [3], {"name": "n"}, {"name": "m"}]
    assert _merger().merge(base, nxt) == [[1, 2], {"name": "n"}, [3], {"name": "m"}]

