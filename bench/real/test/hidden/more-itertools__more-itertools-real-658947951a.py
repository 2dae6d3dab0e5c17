"""Hidden check: one()/only() raise the caller's exceptions even when they are falsy"""

import pytest

from more_itertools import one, only


class Falsy(Exception):
    def __bool__(self):
        return False


class Empty(Exception):
    def __len__(self):
        return 0


def test_one_falsy_too_long():
    with pytest.raises(Falsy):
        one([1, 2], too_long=Falsy("many"))
    with pytest.raises(Empty):
        one("ab", too_long=Empty())


def test_one_falsy_too_short():
    with pytest.raises(Falsy):
        one([], too_short=Falsy("none"))
    with pytest.raises(Empty):
        one(iter(()), too_short=Empty())


def test_only_falsy_too_long():
    with pytest.raises(Falsy):
        only([1, 2, 3], too_long=Falsy())
    assert only([], default=3) == 3
    assert only([7], too_long=Falsy()) == 7
