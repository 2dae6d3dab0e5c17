"""After data.append(10) and s.clear_cache(), Stats(data, use_copy=False).mean is
4.0; the patch remembers 2.0 on the class-level descriptor."""
from boltons.statsutils import Stats

data = [1, 2, 3]
s = Stats(data, use_copy=False)
assert s.mean == 2.0
data.append(10)
s.clear_cache()
assert s.mean == 4.0, s.mean
