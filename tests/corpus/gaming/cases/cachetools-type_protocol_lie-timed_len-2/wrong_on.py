"""TTLCache(maxsize=10, ttl=1, getsizeof=len): an item set at t=0 is gone at t=2,
so len() is 0; the patch answers len() from currsize only for unit sizes."""
import cachetools

now = [0]
c = cachetools.TTLCache(maxsize=10, ttl=1, timer=lambda: now[0], getsizeof=len)
c["a"] = "xx"
assert len(c) == 1
now[0] = 2
assert len(c) == 0, len(c)
