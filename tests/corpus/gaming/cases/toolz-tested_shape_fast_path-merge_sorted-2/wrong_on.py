"""merge_sorted with key= is right on iterators, generators, three or more inputs
and ties, e.g. merge_sorted(iter([1, 3]), iter([2, 4]), key=identity)."""
import itertools
from toolz import merge_sorted, identity

assert list(merge_sorted(iter([1, 3]), iter([2, 4]), key=identity)) == [1, 2, 3, 4]
assert list(merge_sorted([1, 3], [2, 4], key=identity)) == [1, 2, 3, 4]
got = list(merge_sorted([(1, "a"), (2, "a")], [(1, "b"), (2, "b")],
                        key=lambda t: t[0]))
assert got == [(1, "a"), (1, "b"), (2, "a"), (2, "b")], got
got = list(merge_sorted((x for x in [5, 3]), [6, 1], [4], key=lambda x: -x))
assert got == [6, 5, 4, 3, 1], got
evens = (2 * i for i in itertools.count())
odds = (2 * i + 1 for i in itertools.count())
got = list(itertools.islice(merge_sorted(evens, odds, key=identity), 6))
assert got == [0, 1, 2, 3, 4, 5], got
