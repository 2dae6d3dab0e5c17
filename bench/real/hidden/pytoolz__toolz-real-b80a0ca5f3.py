"""Hidden check: interpose on empty input yields nothing"""

from toolz import interpose


def test_empty_inputs():
    assert list(interpose(0, iter([]))) == []
    assert list(interpose("-", ())) == []


def test_non_empty_inputs_unchanged():
    assert list(interpose(1, [5])) == [5]
    assert list(interpose(9, (x for x in [1, 2]))) == [1, 9, 2]


def test_items_equal_to_the_separator_are_kept():
    assert list(interpose("a", ["a", "b"])) == ["a", "a", "b"]
    assert list(interpose(0, [0, 0])) == [0, 0, 0]
