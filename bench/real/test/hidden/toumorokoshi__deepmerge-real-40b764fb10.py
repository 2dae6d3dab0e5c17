"""Hidden check: append_unique compares dicts whose keys are of mixed types"""

from deepmerge import Merger


def make_merger():
    return Merger([(list, ["append_unique"]), (dict, ["merge"]), (set, ["union"])], ["override"], ["override"])


def test_equal_dicts_with_mixed_keys_deduplicated():
    assert make_merger().merge([{1: "a", "b": 2}], [{"b": 2, 1: "a"}]) == [{1: "a", "b": 2}]


def test_different_dicts_with_mixed_keys_kept():
    result = make_merger().merge([{None: 1, 0: 2}], [{0: 3, None: 1}])
    assert result == [{None: 1, 0: 2}, {0: 3, None: 1}]


def test_plain_keys_unchanged():
    assert make_merger().merge([{"x": 1}], [{"x": 1}, {"y": 2}]) == [{"x": 1}, {"y": 2}]
