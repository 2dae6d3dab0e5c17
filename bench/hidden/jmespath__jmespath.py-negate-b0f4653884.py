"""Hidden check: wildcards followed by a field"""

import jmespath


def test_object_wildcard_then_field():
    assert jmespath.search("a.*.b", {"a": {"x": {"b": 1}, "y": {"b": 2}}}) == [1, 2]
    assert jmespath.search("*.name", {"p": {"name": "n1"}, "q": {"name": "n2"}}) == ["n1", "n2"]


def test_list_wildcard_then_field():
    assert jmespath.search("a[*].b", {"a": [{"b": 3}, {"b": 4}]}) == [3, 4]
