"""Hidden check: merge_with accepts one iterable of dicts"""

from toolz import merge_with


def test_merge_with_a_single_tuple_of_dicts():
    dicts = ({"a": 1}, {"a": 10, "b": 3})
    assert merge_with(max, dicts) == {"a": 10, "b": 3}


def test_merge_with_a_single_list_of_three_dicts():
    out = merge_with(tuple, [{"k": 1}, {"k": 2}, {"k": 3, "z": 0}])
    assert out == {"k": (1, 2, 3), "z": (0,)}
