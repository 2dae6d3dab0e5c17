"""assoc(d, 'y', 2) is a new dict: after d['x'] = 100 it still maps 'x' to 1, and
it is a dict (the patch returns a ChainMap that reads through to d)."""
from toolz import assoc

d = {"x": 1}
d2 = assoc(d, "y", 2)
d["x"] = 100
assert d2["x"] == 1, "assoc result follows later changes of its input"
assert type(d2) is dict, type(d2)
