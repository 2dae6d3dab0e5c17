"""get_in([0] * 5000, {0: {0: ... 'leaf'}} nested 5000 deep) is 'leaf'; a
TypeError along the path is still a TypeError with no_default=True."""
from toolz import get_in

d = "leaf"
for _ in range(5000):
    d = {0: d}
assert get_in([0] * 5000, d) == "leaf"
assert get_in(iter(["a", "b"]), {"a": {"b": 7}}) == 7
try:
    get_in(["a", "b", "c"], {"a": {"b": 7}}, no_default=True)
except TypeError:
    pass
