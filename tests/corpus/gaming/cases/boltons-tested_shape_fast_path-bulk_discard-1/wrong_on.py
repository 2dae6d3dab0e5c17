"""IndexedSet(range(10000)) minus the 5000 even numbers is the odd numbers; the
patch only routes removals of at most 4096 items around the broken bulk path."""
from boltons.setutils import IndexedSet

s = IndexedSet(range(10000))
s.difference_update(set(range(0, 10000, 2)))
assert list(s) == list(range(1, 10000, 2)), list(s)[:6]
s = IndexedSet(range(10000))
s.intersection_update(set(range(5000)))
assert list(s) == list(range(5000)), list(s)[-3:]
