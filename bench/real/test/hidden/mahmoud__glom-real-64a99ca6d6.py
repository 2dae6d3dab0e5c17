"""Hidden check: glom error messages carry no stray caret line from Python 3.11 tracebacks"""

import pytest

from glom import GlomError, glom


def message(target, spec):
    with pytest.raises(GlomError) as info:
        glom(target, spec)
    return str(info.value)


def caret_only(line):
    return line.strip() != "" and set(line) <= {" ", "^", "~"}


def test_builtin_call_error_message():
    assert message({"a": "x"}, {"b": ("a", int)}) == (
        "error raised while processing, details below.\n"
        " Target-spec trace (most recent last):\n"
        " - Target: {'a': 'x'}\n"
        " - Spec: {'b': ('a', int)}\n"
        " - Spec: ('a', int)\n"
        " - Spec: 'a'\n"
        " - Target: 'x'\n"
        " - Spec: int\n"
        "ValueError: invalid literal for int() with base 10: 'x'"
    )


def test_error_inside_list_spec():
    msg = message([1, "x"], [int])
    assert not any(caret_only(line) for line in msg.splitlines())
    assert msg.splitlines()[-3:] == [
        " - Target: 'x'",
        " - Spec: int",
        "ValueError: invalid literal for int() with base 10: 'x'",
    ]


def test_user_function_error_keeps_its_frame():
    msg = message({"a": 1}, ("a", lambda x: x / 0))
    lines = msg.splitlines()
    assert not caret_only(lines[lines.index(" - Target: 1") + 2])
    assert lines[-1] == "ZeroDivisionError: division by zero"
