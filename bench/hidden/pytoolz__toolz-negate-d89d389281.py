"""Hidden check: introspection of builtins that inspect cannot read"""

from toolz.functoolz import num_required_args, is_valid_args


def test_builtin_without_a_python_signature():
    # dict.fromkeys has no inspectable signature on some versions; the registry answers
    assert num_required_args(divmod) == 2
    assert is_valid_args(map, (str, [1]), {}) is True


def test_python_function():
    def f(a, b, *rest):
        return a

    assert num_required_args(f) == 2
