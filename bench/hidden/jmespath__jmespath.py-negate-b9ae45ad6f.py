"""Hidden check: flatten projections"""

import jmespath


def test_flatten():
    assert jmespath.search("a[]", {"a": [[1, 2], [3], 4]}) == [1, 2, 3, 4]
    assert jmespath.search("[][]", [[[1]], [[2, 3]]]) == [1, 2, 3]


def test_flatten_then_field():
    assert jmespath.search("a[].b", {"a": [[{"b": 1}], [{"b": 2}]]}) == [1, 2]
