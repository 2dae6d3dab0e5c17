"""A zero-size cache returns the value uncached; a cache raising RuntimeError on
store still propagates it."""
import cachetools


class ReadOnly(dict):
    def __setitem__(self, key, value):
        raise RuntimeError("read-only cache")


f = cachetools.cached(ReadOnly())(lambda n: n)
try:
    f(1)
except RuntimeError:
    pass
else:
    raise AssertionError("the cache's RuntimeError was swallowed")
cache = cachetools.LRUCache(0)
g = cachetools.cached(cache)(lambda n: n)
assert g(2) == 2 and len(cache) == 0
