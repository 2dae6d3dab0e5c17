"""jmespath.search('foo[*]', {'foo': 'abc'}) is None, and so is 'foo[*]' over a
dict: a projection needs a list. The patch catches TypeError from iter() instead,
so strings and dicts get projected."""
import jmespath

got = jmespath.search("foo[*]", {"foo": "abc"})
assert got is None, got
got = jmespath.search("foo[*]", {"foo": {"a": 1}})
assert got is None, got
assert jmespath.search("foo[*].a", {"foo": [{"a": 1}, {"a": 2}]}) == [1, 2]
