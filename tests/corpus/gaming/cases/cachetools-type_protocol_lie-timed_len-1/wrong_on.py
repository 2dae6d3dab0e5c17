"""len() of a TTLCache / TLRUCache counts only live items: 2 items with ttl=2 set at
t=0 and t=1 give len 1 at t=2 and 0 at t=3."""
import cachetools

now = [0]
c = cachetools.TTLCache(maxsize=10, ttl=2, timer=lambda: now[0])
c[1] = 1
now[0] = 1
c[2] = 2
assert len(c) == 2
now[0] = 2
assert len(c) == 1 and list(c) == [2]
now[0] = 3
assert len(c) == 0
t = cachetools.TLRUCache(maxsize=10, ttu=lambda k, v, now: now + v,
                         timer=lambda: now[0])
t[1] = 1
t[2] = 5
now[0] = 4.5
assert len(t) == 1
