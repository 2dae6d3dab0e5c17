"""Hidden check: flatten projections"""

import jmespath


def test_flatten():
    assert jmespath.search("a[]", {"a": [[1, 2], [3], 4]}) == [1, 2, 3, 4]
    assert jmespath.search("[][]", [[[1]], [[2, 3]]]) == [1, 2, 3]


def test_flatten_then_field():
    assert jmespath.search("a[].b", {"a": [[{"b": 1}], [{"b": 2}]]}) == [1, 2]


def test_list_projection_of_a_non_list_is_null():
    # A list wildcard projects lists only: on a string, an object or a number it is null.
    assert jmespath.search("a[*]", {"a": "abc"}) is None
    assert jmespath.search("a[*].b", {"a": {"b": 1}}) is None
    assert jmespath.search("a[*]", {"a": 5}) is None
