"""Hidden check: seekable(maxlen=0) does not drop the item a peek or truth test looked at"""

from more_itertools import seekable


def test_peek_then_next():
    s = seekable(iter([1, 2, 3]), maxlen=0)
    assert s.peek() == 1
    assert next(s) == 1
    assert next(s) == 2


def test_bool_does_not_consume():
    s = seekable(iter("ab"), maxlen=0)
    assert bool(s) is True
    assert list(s) == ["a", "b"]


def test_repeated_peeks():
    s0 = seekable(iter([5, 6]), maxlen=0)
    assert [s0.peek(), s0.peek()] == [5, 5]
    assert list(s0) == [5, 6]
    assert s0.peek("done") == "done"
