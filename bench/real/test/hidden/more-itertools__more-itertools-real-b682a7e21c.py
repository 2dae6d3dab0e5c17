"""Hidden check: windowed running_min/running_max report the earliest of equal values"""

from more_itertools import running_max, running_min


def types(values):
    return [type(v).__name__ for v in values]


def test_running_min_keeps_first_of_equals():
    assert types(running_min([1, 1.0, True], maxlen=2)) == ["int", "int", "float"]
    assert types(running_min([2, 2.0, 1], maxlen=2)) == ["int", "int", "int"]


def test_running_max_keeps_first_of_equals():
    assert types(running_max([1.0, 1, True, 0], maxlen=3)) == ["float", "float", "float", "int"]


def test_values_unchanged():
    assert list(running_min([5, 3, 4, 6, 1], maxlen=2)) == [5, 3, 3, 4, 1]
    assert list(running_max([5, 3, 4, 6, 1], maxlen=2)) == [5, 5, 4, 6, 6]
