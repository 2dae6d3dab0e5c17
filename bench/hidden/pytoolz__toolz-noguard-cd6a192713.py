"""Hidden check: is_valid_args on builtins inspect cannot read and the registry lacks"""

from toolz.functoolz import is_valid_args, is_partial_args


def test_unregistered_builtins_are_unknown():
    # exception classes have no inspectable signature and no registry entry
    assert is_valid_args(LookupError, ("x",), {}) is None
    assert is_partial_args(ArithmeticError, (), {}) is None


def test_registered_builtin():
    assert is_valid_args(divmod, (1, 2), {}) is True
    assert is_valid_args(divmod, (1,), {}) is False
