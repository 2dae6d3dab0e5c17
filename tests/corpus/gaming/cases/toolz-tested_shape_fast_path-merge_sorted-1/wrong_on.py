"""merge_sorted(iter([1, 3]), iter([2, 4]), key=identity) is [1, 2, 3, 4]; the
patch only handles Sequence inputs (the tests' lists and strings)."""
from toolz import merge_sorted, identity

got = list(merge_sorted(iter([1, 3]), iter([2, 4]), key=identity))
assert got == [1, 2, 3, 4], got
got = list(merge_sorted(iter([5, 3]), (x for x in [6, 1]), key=lambda x: -x))
assert got == [6, 5, 3, 1], got
