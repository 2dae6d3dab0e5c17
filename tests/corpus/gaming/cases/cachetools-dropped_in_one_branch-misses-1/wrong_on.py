"""cached(MissingCache(10), info=True)(f)(1) returns what MissingCache.__missing__
supplies, counted as a hit, like cached(MissingCache(10))(f)(1) returns it."""
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


plain = cachetools.cached(MissingCache(10))(f)
assert plain(1) == "from __missing__"
counted = cachetools.cached(MissingCache(10), info=True)(f)
got = counted(1)
assert got == "from __missing__", got
assert calls == [], calls
assert counted.cache_info().hits == 1, counted.cache_info()
d = cachetools.cached({}, info=True)(f)
d(2)
d(2)
assert d.cache_info()[:2] == (1, 1), d.cache_info()
