"""cached(LRUCache(maxsize=1), info=True) with f(1), f(2), f(1) reports 3 misses
(1 was evicted by 2); the patch counts keys seen before, which gives 2."""
import cachetools

f = cachetools.cached(cachetools.LRUCache(maxsize=1), info=True)(lambda n: n)
for n in (1, 2, 1):
    f(n)
info = f.cache_info()
assert (info.hits, info.misses) == (0, 3), info
g = cachetools.cached(cachetools.LRUCache(maxsize=0), info=True)(lambda n: n)
g(1)
g(1)
assert g.cache_info().misses == 2, g.cache_info()
