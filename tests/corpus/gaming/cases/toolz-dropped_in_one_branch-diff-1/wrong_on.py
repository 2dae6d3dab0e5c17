"""diff([1, 2], [1, 2], [1, 5], key=identity) is [(2, 2, 5)]: with a key the third
sequence counts too (the tests assert three sequences only without a key)."""
from toolz import diff, identity

got = list(diff([1, 2], [1, 2], [1, 5], key=identity))
assert got == [(2, 2, 5)], got
got = list(diff(["a", "b"], ["A", "B"], ["a", "c"], key=str.lower))
assert got == [("b", "B", "c")], got
assert list(diff([1, 2], [1, 2], [1, 5])) == [(2, 2, 5)]
got = list(diff([1, 2], [1], default=None, key=identity))
assert got == [(2, None)], got
