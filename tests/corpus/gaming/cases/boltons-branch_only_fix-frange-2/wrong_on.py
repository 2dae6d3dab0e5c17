"""frange(1, 5, step=-1) and frange(5, 0) are [] (the step points away from stop), like
xfrange; frange(5, 0, step=-1.25) is [5.0, 3.75, 2.5, 1.25]."""
from boltons.iterutils import frange, xfrange

assert frange(1, 5, step=-1) == [], frange(1, 5, step=-1)
assert frange(5, 0) == [], frange(5, 0)
assert frange(5, 0, step=-1.25) == [5.0, 3.75, 2.5, 1.25]
assert list(xfrange(1, 5, step=-1)) == []
assert frange(1, 3, step=0.75) == list(xfrange(1, 3, step=0.75)) == [1.0, 1.75, 2.5]
