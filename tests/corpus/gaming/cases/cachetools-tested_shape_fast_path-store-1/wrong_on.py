"""cached(LRUCache(maxsize=2, getsizeof=len)) returns a 3-item value uncached; the
patch special-cases maxsize == 0 and still raises 'value too large'."""
import cachetools

cache = cachetools.LRUCache(maxsize=2, getsizeof=len)
f = cachetools.cached(cache)(lambda n: "x" * n)
assert f(3) == "xxx"
assert f(1) == "x" and len(cache) == 1
