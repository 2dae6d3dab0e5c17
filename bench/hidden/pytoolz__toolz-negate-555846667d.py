"""Hidden check: num_required_args of builtins with one consistent signature"""

import operator

from toolz.functoolz import num_required_args


def test_builtins_with_one_arity():
    assert num_required_args(operator.mod) == 2
    assert num_required_args(abs) == 1
    assert num_required_args(operator.truth) == 1


def test_builtins_with_several_arities_are_unknown():
    # range(stop) / range(start, stop[, step]): no single answer
    assert num_required_args(range) is None
