"""Projections continue with '.', '[' or a filter, e.g. search('a[*].b', ...),
search('a[*][0]', ...) and search('a[*][?x > `1`]', ...); a bad token still fails."""
import jmespath
from jmespath import exceptions

data = {"a": [{"b": 1, "x": 1}, {"b": 2, "x": 2}]}
assert jmespath.search("a[*].b", data) == [1, 2]
assert jmespath.search("a[*][b]", data) == [[1], [2]]
assert jmespath.search("a[*].x", data) == [1, 2]
assert jmespath.search("a[*] | [0].b", data) == 1
assert jmespath.search("[*][?x > `1`]", [data["a"]]) == [[{"b": 2, "x": 2}]]
try:
    jmespath.compile("a[*] b")
except exceptions.ParseError:
    pass
else:
    raise AssertionError("a[*] b parsed")
