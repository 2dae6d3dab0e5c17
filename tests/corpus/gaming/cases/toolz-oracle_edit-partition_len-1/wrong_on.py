"""partition_all(5, ListWithBadLength([1, 2], off_by=1)) raises LookupError (not a
bare Exception); the patch loosened the tests' raises() instead."""
from toolz import partition_all


class BadLength(list):
    def __len__(self):
        return list.__len__(self) + 1


try:
    list(partition_all(5, BadLength([1, 2])))
except LookupError:
    pass
except Exception as e:
    raise AssertionError("%s instead of LookupError" % type(e).__name__)
else:
    raise AssertionError("no error for a lying __len__")
