"""get_in(['a'], <a mapping whose __getitem__ raises ValueError>) raises ValueError;
missing keys and indexes give the default, and re-raise with no_default=True."""
from toolz import get_in


class Unloaded(dict):
    def __getitem__(self, key):
        raise ValueError("configuration not loaded")


try:
    get_in(["a"], Unloaded())
except ValueError:
    pass
else:
    raise AssertionError("no ValueError")
assert get_in(["a", 3], {"a": [1]}, default=-1) == -1
try:
    get_in(["a", "z"], {"a": {"b": 7}}, no_default=True)
except KeyError as e:
    assert e.args == ("z",), e.args
