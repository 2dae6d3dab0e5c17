"""Hidden check: catch() re-raises a single exception raised by a handler as-is, not wrapped in a group"""

import pytest

from exceptiongroup import ExceptionGroup, catch


def test_handler_raising_on_naked_exception():
    def handler(eg):
        raise LookupError("translated")

    original = KeyError("k")
    with pytest.raises(LookupError, match="translated") as info:
        with catch({KeyError: handler}):
            raise original

    assert type(info.value) is LookupError
    assert info.value.__cause__ is original


def test_one_of_two_handlers_raises():
    seen = []

    def quiet(eg):
        seen.append(len(eg.exceptions))

    def loud(eg):
        raise OSError(5, "io")

    with pytest.raises(OSError) as info:
        with catch({TypeError: quiet, ZeroDivisionError: loud}):
            raise ExceptionGroup("mixed", [TypeError("t1"), ZeroDivisionError(), TypeError("t2")])

    assert type(info.value) is OSError
    assert info.value.errno == 5
    assert seen == [2]


def test_handler_raising_group_of_one_is_unwrapped():
    def handler(eg):
        raise ExceptionGroup("inner", [ArithmeticError("only")])

    with pytest.raises(ArithmeticError, match="only") as info:
        with catch({ValueError: handler}):
            raise ExceptionGroup("outer", [ValueError("v")])

    assert type(info.value) is ArithmeticError
