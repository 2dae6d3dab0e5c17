"""Hidden check: append_unique does not add values repeated within the incoming list"""

from deepmerge import Merger


def make_merger():
    return Merger([(list, ["append_unique"]), (dict, ["merge"]), (set, ["union"])], ["override"], ["override"])


def test_repeated_scalars():
    assert make_merger().merge([1], [2, 2, 3, 3, 1]) == [1, 2, 3]
    assert make_merger().merge([], ["a", "a"]) == ["a"]


def test_repeated_unhashables():
    assert make_merger().merge([[1]], [[2], [2], [1]]) == [[1], [2]]


def test_nested_lists_in_dicts():
    assert make_merger().merge({"k": [0]}, {"k": [5, 5, 0]}) == {"k": [0, 5]}


def test_inputs_not_mutated():
    base, nxt = [1], [2, 2]
    make_merger().merge(base, nxt)
    assert nxt == [2, 2]
