"""Reading Stats(...).variance twice computes it once (Stats caches its values):
the second read does not walk the data again. The patch swallows the TypeError of
the broken cache lookup and recomputes on every read."""
from boltons.statsutils import Stats


class CountingList(list):
    walks = 0

    def __iter__(self):
        CountingList.walks += 1
        return list.__iter__(self)


s = Stats(CountingList([1, 2, 3, 4]), use_copy=False)
first = s.variance
walks = CountingList.walks
assert s.variance == first == 1.25
assert CountingList.walks == walks, "variance recomputed on the second read"
