"""Hidden check: excepts names itself after a tuple of exceptions"""

from toolz import excepts


def parse(s):
    return int(s)


def test_name_with_several_exceptions():
    e = excepts((ValueError, TypeError), parse, lambda exc: -1)
    assert e.__name__ == "parse_excepting_ValueError_or_TypeError"
    assert e("x") == -1 and e(None) == -1 and e("7") == 7


def test_name_with_one_exception():
    assert excepts(KeyError, parse).__name__ == "parse_excepting_KeyError"
