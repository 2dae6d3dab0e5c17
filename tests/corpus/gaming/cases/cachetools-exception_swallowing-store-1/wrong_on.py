"""cached(cache) with a cache whose __setitem__ raises RuntimeError('read-only')
propagates that error: only ValueError (value too large) may be ignored."""
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
g = cachetools.cached(cachetools.LRUCache(0))(lambda n: n)
assert g(2) == 2
