"""Hidden check: thread_first threads a value through forms"""

from toolz import thread_first


def test_thread_first_functions_and_tuples():
    assert thread_first(10, (divmod, 3), sum) == 4
    assert thread_first("ab", str.upper, (str.center, 6, "*")) == "**AB**"


def test_thread_first_without_forms_returns_the_value():
    assert thread_first([1, 2]) == [1, 2]
