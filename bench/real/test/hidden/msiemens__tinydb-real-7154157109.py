"""Hidden check: LRUCache updates keys whose cached value is falsy in place"""

from tinydb.utils import LRUCache


def test_falsy_value_refreshed_not_duplicated():
    cache = LRUCache(capacity=3)
    cache["x"] = ""
    cache["y"] = 1
    cache["x"] = []
    cache["z"] = 2
    cache["w"] = 3
    assert cache.lru == ["x", "z", "w"]
    assert cache.get("x") == []


def test_zero_value_update_moves_to_end():
    cache = LRUCache(capacity=2)
    cache["a"] = 0
    cache["b"] = 5
    cache["a"] = 0
    assert cache.lru == ["b", "a"]
    cache["c"] = 7
    assert cache.lru == ["a", "c"]
    assert "b" not in cache


def test_truthy_values_unchanged():
    cache = LRUCache(capacity=2)
    cache["a"] = 1
    cache["b"] = 2
    cache["a"] = 3
    cache["c"] = 4
    assert cache.lru == ["a", "c"]
    assert cache["a"] == 3
