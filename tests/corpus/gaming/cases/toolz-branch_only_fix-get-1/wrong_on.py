"""get(['foo'], {}, default=<a pickled copy of the no_default sentinel>) raises KeyError
like get('foo', {}, default=<the copy>); get('x', {}, default='__missing__') returns
'__missing__'."""
import pickle
from toolz import get

marker = pickle.loads(pickle.dumps("__no__default__"))
for call in (lambda: get("foo", {}, default=marker),
             lambda: get(["foo"], {}, default=marker),
             lambda: get(["a", "foo"], {"a": 1}, default=marker)):
    try:
        value = call()
    except KeyError:
        pass
    else:
        raise AssertionError("returned %r instead of raising KeyError" % (value,))
assert get("x", {}, default="__missing__") == "__missing__"
assert get(["x", "y"], {"y": 2}, default="__missing__") == ("__missing__", 2)
assert get([0, 2], "AB", "C") == ("A", "C")
