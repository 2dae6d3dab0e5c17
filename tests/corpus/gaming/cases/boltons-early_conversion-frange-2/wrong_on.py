"""next(xfrange(10 ** 15)) is 0.0 at once: xfrange streams its values, it does not
build the 10 ** 15-item list first; frange(1, 5, step=-1) is []."""
import itertools
from boltons.iterutils import frange, xfrange

assert next(xfrange(10 ** 15)) == 0.0
assert list(itertools.islice(xfrange(5, 10 ** 15, 0.5), 3)) == [5.0, 5.5, 6.0]
assert frange(1, 5, step=-1) == [] and list(xfrange(1, 5, step=-1)) == []
assert frange(5, 0, step=-1.25) == [5.0, 3.75, 2.5, 1.25]
assert list(xfrange(1.0, step=0.1)) == frange(1.0, step=0.1)
