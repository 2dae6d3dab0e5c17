"""peekn(2, <a generator that raises once read past its fifth item>) reads two items,
and the rest still streams: peekn(3, itertools.count()) returns at once."""
import itertools
from toolz import peekn, take


def stream():
    for i in range(5):
        yield i
    raise RuntimeError("read past what was needed")


head, rest = peekn(2, stream())
assert head == (0, 1), head
assert list(take(4, rest)) == [0, 1, 2, 3]
head, rest = peekn(3, itertools.count())
assert head == (0, 1, 2) and list(take(5, rest)) == [0, 1, 2, 3, 4]
head, rest = peekn(2, ("a", "b", "c"))
assert head == ("a", "b") and tuple(rest) == ("a", "b", "c")
