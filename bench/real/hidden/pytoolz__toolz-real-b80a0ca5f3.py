"""Hidden check: interpose on empty input yields nothing"""

from toolz import interpose


def test_empty_inputs():
    assert list(interpose(0, iter([]))) == []
    assert list(interpose("-", ())) == []


def test_non_empty_inputs_unchanged():
    assert list(interpose(1, [5])) == [5]
    assert list(interpose(9, (x for x in [1, 2]))) == [1, 9, 2]
