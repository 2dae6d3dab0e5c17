"""Hidden check: append_unique handles tuples that contain unhashable values"""

from deepmerge import Merger


def make_merger():
    return Merger([(list, ["append_unique"]), (dict, ["merge"]), (set, ["union"])], ["override"], ["override"])


def test_tuple_with_list_into_empty():
    assert make_merger().merge([], [([1, 2],)]) == [([1, 2],)]


def test_tuples_with_dicts():
    result = make_merger().merge([({"a": 1},)], [({"a": 1},), ({"a": 2},)])
    assert result == [({"a": 1},), ({"a": 2},)]


def test_mixed_tuples():
    assert make_merger().merge([(1, [2])], [(1, [2]), (1, [3])]) == [(1, [2]), (1, [3])]
    assert make_merger().merge([(1, 2)], [(1, 2), (3, 4)]) == [(1, 2), (3, 4)]
