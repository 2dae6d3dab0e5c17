"""Hidden check: a curry's signature skips its positional arguments"""

import inspect

from toolz import curry


def test_bound_positional_arguments_are_skipped():
    def h(p, q, r):
        return (p, q, r)

    assert list(inspect.signature(curry(h, 1, 2)).parameters) == ["r"]
    assert list(inspect.signature(curry(h)).parameters) == ["p", "q", "r"]
