"""Hidden check: all_unique reports True only when no two elements (or keys) are equal"""

import more_itertools as mi


def test_strings_and_generators():
    assert mi.all_unique("python") is True
    assert mi.all_unique("banana") is False
    assert mi.all_unique(x * x for x in range(-3, 1)) is True
    assert mi.all_unique(x * x for x in range(-2, 3)) is False


def test_equal_but_differently_typed_elements():
    # 1 == 1.0 == True, so they are duplicates; 0 and "0" are not
    assert mi.all_unique([1, 1.0]) is False
    assert mi.all_unique([True, 1]) is False
    assert mi.all_unique([0, "0", None]) is True


def test_key_function():
    assert mi.all_unique([-3, 1, 2], key=abs) is True
    assert mi.all_unique([-3, 1, 3], key=abs) is False
    assert mi.all_unique(["x", "yy", "zzz"], key=len) is True


def test_unhashable_elements():
    assert mi.all_unique([{"a": 1}, {"a": 2}, {1, 2}]) is True
    assert mi.all_unique([{"a": 1}, {1, 2}, {"a": 1}]) is False
