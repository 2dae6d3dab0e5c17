"""list(partition_all(3000, iter(range(2999)))) is one chunk of 2999 items: the last
chunk's padding is found however long the chunk is."""
from toolz import partition_all

got = list(partition_all(3000, iter(range(2999))))
assert len(got) == 1 and got[0] == tuple(range(2999)), len(got)
got = list(partition_all(5000, iter(range(7001))))
assert [len(c) for c in got] == [5000, 2001], [len(c) for c in got]
assert list(partition_all(4, iter(range(6)))) == [(0, 1, 2, 3), (4, 5)]
assert list(partition_all(3, iter(range(7)))) == [(0, 1, 2), (3, 4, 5), (6,)]
