"""Hidden check: curry equality needs the same args and keywords"""

from toolz import curry


def g(a, b, c=0):
    return a + b + c


def test_same_args_other_keywords_differ():
    assert curry(g, 1, c=2) != curry(g, 1, c=3)
    assert curry(g, 1, c=2) == curry(g, 1, c=2)


def test_other_args_same_keywords_differ():
    assert curry(g, 1, c=2) != curry(g, 2, c=2)
