"""Still FIFO: fifo_cache(maxsize=2) evicts the first-inserted entry: after f(1), f(2), f(1) and
f(3), calling f(1) again is a miss (an LRU cache would have kept 1 and evicted 2)."""
import cachetools.func

calls = []


@cachetools.func.fifo_cache(maxsize=2)
def f(n):
    calls.append(n)
    return n


for n in (1, 2, 1, 3, 1):
    f(n)
assert calls == [1, 2, 3, 1], "calls %r: not first-in-first-out" % (calls,)
info = f.cache_info()
assert (info.hits, info.misses, info.maxsize) == (1, 4, 2), info
