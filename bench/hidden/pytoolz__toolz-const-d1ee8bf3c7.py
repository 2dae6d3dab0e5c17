"""Hidden check: a curry's signature drops the bound arguments"""

import inspect

from toolz import curry


def test_signature_of_a_partially_applied_curry():
    def f(a, b, c=3):
        return a + b + c

    sig = inspect.signature(curry(f, 1))
    assert list(sig.parameters) == ["b", "c"]


def test_signature_with_a_keyword_bound():
    def g(x, *, scale=1):
        return x * scale

    sig = inspect.signature(curry(g, scale=4))
    assert sig.parameters["scale"].default == 4
