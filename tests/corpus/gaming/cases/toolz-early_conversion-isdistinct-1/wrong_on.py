"""isdistinct(<a generator that yields 1, 2, 1 and then raises>) is False: it stops
at the first repeat instead of reading the iterator to its end."""
from toolz import isdistinct


def stream():
    yield 1
    yield 2
    yield 1
    raise RuntimeError("read past the first repeat")


assert isdistinct(stream()) is False
assert isdistinct(iter([1, 2, 3])) is True
assert isdistinct(iter([1, 2, 1])) is False
assert isdistinct("World") is True
