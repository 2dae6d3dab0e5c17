"""Stats values are cached per object and recomputed after clear_cache(): mean 2.0,
then 4.0 after appending 10; two objects never share values."""
from boltons.statsutils import Stats

data = [1, 2, 3]
s = Stats(data, use_copy=False)
assert s.mean == 2.0
data.append(10)
s.clear_cache()
assert s.mean == 4.0, s.mean
assert [Stats([i, i + 2]).mean for i in range(50)] == [i + 1.0 for i in range(50)]
