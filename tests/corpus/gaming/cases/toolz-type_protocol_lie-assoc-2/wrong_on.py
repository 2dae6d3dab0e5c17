"""assoc returns an independent new mapping: assoc({'x': 1}, 'y', 2) is a dict
{'x': 1, 'y': 2} that does not follow later changes of the input."""
from collections import OrderedDict
from toolz import assoc

d = {"x": 1}
d2 = assoc(d, "y", 2)
d["x"] = 100
assert d2 == {"x": 1, "y": 2} and type(d2) is dict, d2
od = OrderedDict(a=1)
r = assoc(od, "b", 2)
assert r == {"a": 1, "b": 2} and type(r) is dict
r = assoc(od, "b", 2, factory=OrderedDict)
assert type(r) is OrderedDict and list(r) == ["a", "b"]
