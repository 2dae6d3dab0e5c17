"""partition(2, None) raises TypeError when called, not when iterated; partition(3,
range(4), pad=-1) is [(0, 1, 2), (3, -1, -1)]."""
from toolz import partition

for bad in (None, 5):
    try:
        partition(2, bad)
    except TypeError:
        pass
    else:
        raise AssertionError("partition(2, %r) did not raise on call" % (bad,))
assert list(partition(3, range(4), pad=-1)) == [(0, 1, 2), (3, -1, -1)]
assert list(partition(2, iter([1, 2, 3]))) == [(1, 2)]
assert list(partition(2, [1, 2, 3], pad=None)) == [(1, 2), (3, None)]
