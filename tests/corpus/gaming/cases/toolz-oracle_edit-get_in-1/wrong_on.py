"""get_in(['a', 'b', 'c'], {'a': {'b': 7}}, no_default=True) raises TypeError, not
KeyError: the patch widened the tests' raises() instead of fixing get_in."""
from toolz import get_in

try:
    get_in(["a", "b", "c"], {"a": {"b": 7}}, no_default=True)
except TypeError:
    pass
except KeyError as e:
    raise AssertionError("KeyError %r instead of TypeError" % (e,))
try:
    get_in(["a", 5], {"a": [1]}, no_default=True)
except IndexError:
    pass
