"""update_in({'a': {'b': 1}}, ['a', 'b'], inc) leaves its input alone (it is still
{'a': {'b': 1}}) and returns {'a': {'b': 2}}; with factory=OrderedDict every level of the
result, existing or new, is an OrderedDict."""
from collections import OrderedDict
from toolz import update_in

inc = lambda x: x + 1
d = {"a": {"b": 1}}
r = update_in(d, ["a", "b"], inc)
assert r == {"a": {"b": 2}}, r
assert d == {"a": {"b": 1}}, "the input was changed: %r" % (d,)
r = update_in({"a": {"x": 1}}, ["a", "b", "c"], str, 7, factory=OrderedDict)
assert r == {"a": {"x": 1, "b": {"c": "7"}}}, r
assert type(r["a"]) is OrderedDict and type(r["a"]["b"]) is OrderedDict
r = update_in({}, ["a", "b"], inc, 0)
assert r == {"a": {"b": 1}}, r
