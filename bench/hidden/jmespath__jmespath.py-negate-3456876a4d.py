"""Hidden check: dotted paths and multiselects"""

import jmespath


def test_nested_fields():
    assert jmespath.search("a.b.c", {"a": {"b": {"c": 5}}}) == 5


def test_multiselect_after_a_dot():
    assert jmespath.search("a.[b, c]", {"a": {"b": 1, "c": 2}}) == [1, 2]
