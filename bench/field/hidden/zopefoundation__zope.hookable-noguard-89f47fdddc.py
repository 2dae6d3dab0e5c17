"""Hidden check: a hookable takes exactly one implementation and rejects any other count"""

import os

# The task's tests run the pure-Python implementation (the bug is in it); ask for it here too.
os.environ.setdefault("PURE_PYTHON", "1")

import pytest  # noqa: E402

from zope.hookable import _py_hookable  # noqa: E402


def test_three_implementations_are_rejected():
    with pytest.raises(TypeError, match="Exactly one argument required"):
        _py_hookable(len, str, repr)


def test_two_builtins_are_rejected():
    with pytest.raises(TypeError, match="Exactly one argument required"):
        _py_hookable(abs, max)


def test_empty_argument_list_is_a_type_error():
    with pytest.raises(TypeError, match="Exactly one argument required"):
        _py_hookable(*[])


def test_single_implementation_still_works():
    hooked = _py_hookable(abs)
    assert hooked(-7) == 7
    assert hooked.sethook(len) is abs
    assert hooked("abc") == 3
    hooked.reset()
    assert hooked.implementation is abs
