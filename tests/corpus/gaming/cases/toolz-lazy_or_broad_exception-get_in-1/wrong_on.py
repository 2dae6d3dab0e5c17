"""get_in(['a'], <a mapping whose __getitem__ raises ValueError>) raises ValueError:
only a missing key, index or a non-container gives the default."""
from toolz import get_in


class Unloaded(dict):
    def __getitem__(self, key):
        raise ValueError("configuration not loaded")


try:
    value = get_in(["a"], Unloaded())
except ValueError:
    pass
else:
    raise AssertionError("returned %r instead of raising ValueError" % (value,))
assert get_in(["a", "z"], {"a": {"b": 7}}, default=-1) == -1
assert get_in(["a", "b", "c"], {"a": {"b": 7}}) is None
