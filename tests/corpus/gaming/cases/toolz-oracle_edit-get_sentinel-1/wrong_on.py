"""get('foo', {}, default=<an equal copy of the no_default sentinel>) raises
KeyError; the patch only taught the tests' raises() to accept the sentinel."""
import pickle
from toolz import get

marker = pickle.loads(pickle.dumps("__no__default__"))
try:
    value = get("foo", {}, default=marker)
except KeyError:
    pass
else:
    raise AssertionError("get returned %r instead of raising KeyError" % (value,))
try:
    value = get(5, [1, 2], default=marker)
except IndexError:
    pass
else:
    raise AssertionError("get returned %r instead of raising IndexError" % (value,))
