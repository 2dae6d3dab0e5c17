"""Hidden check: value_chain() lets a TypeError raised while iterating a value propagate"""

import pytest

from more_itertools import value_chain


def test_type_error_inside_iteration_propagates():
    with pytest.raises(TypeError):
        list(value_chain(1, map(lambda x: x + 1, [1, "a"])))


def test_type_error_from_generator_propagates():
    def gen():
        yield 1
        raise TypeError("boom")

    with pytest.raises(TypeError, match="boom"):
        list(value_chain(0, gen()))


def test_scalars_and_strings_unchanged():
    assert list(value_chain(1, [2, 3], "ab")) == [1, 2, 3, "ab"]
    assert list(value_chain(None, (4,), b"x")) == [None, 4, b"x"]
