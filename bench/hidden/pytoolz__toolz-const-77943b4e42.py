"""Hidden check: curried builtins with *args still curry"""

from toolz import curry


def test_curry_of_a_varargs_function_waits_for_more_arguments():
    @curry
    def total(first, second, *more):
        return first + second + sum(more)

    assert total(1)(2) == 3
    assert total(1, 2, 3, 4) == 10


def test_curried_namespace_functions_curry():
    from toolz.curried import take, get

    assert list(take(2)([5, 6, 7])) == [5, 6]
    assert get(1)("xyz") == "y"
