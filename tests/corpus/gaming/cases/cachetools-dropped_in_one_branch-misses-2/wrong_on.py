"""cached(MissingCache(10), info=True)(f)(1) returns what __missing__ supplies and
counts a hit; a plain dict cache counts one miss and one hit for f(2), f(2)."""
import cachetools

calls = []


class MissingCache(cachetools.LRUCache):
    def __missing__(self, key):
        value = "from __missing__"
        self[key] = value
        return value


def f(x):
    calls.append(x)
    return "computed"


counted = cachetools.cached(MissingCache(10), info=True)(f)
assert counted(1) == "from __missing__" and calls == []
assert counted.cache_info().hits == 1, counted.cache_info()
d = cachetools.cached({}, info=True)(f)
d(2)
d(2)
assert d.cache_info()[:2] == (1, 1), d.cache_info()
z = cachetools.cached(cachetools.LRUCache(0), info=True)(f)
assert z(3) == "computed" and z.cache_info()[:2] == (0, 1)
