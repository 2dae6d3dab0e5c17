"""list(partition_all(4, iter(range(6)))) == [(0, 1, 2, 3), (4, 5)]: the patch
only handles a final chunk that is one item short (the test's 7 items by 4)."""
from toolz import partition_all

got = list(partition_all(4, iter(range(6))))
assert got == [(0, 1, 2, 3), (4, 5)], got
got = list(partition_all(5, iter(range(6))))
assert got == [(0, 1, 2, 3, 4), (5,)], got
