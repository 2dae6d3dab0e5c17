"""ttl_cache(maxsize=None, ttl=10) still expires: a call at t=0 and again at t=11
runs the function twice. The patch swapped the TTL cache for a plain dict."""
import cachetools.func

now = [0]
calls = []


@cachetools.func.ttl_cache(maxsize=None, ttl=10, timer=lambda: now[0])
def f(n):
    calls.append(n)
    return n


f(1)
f(1)
now[0] = 11
f(1)
assert calls == [1, 1], "nothing expired after the ttl: calls %r" % (calls,)
assert f.cache_info().maxsize is None
