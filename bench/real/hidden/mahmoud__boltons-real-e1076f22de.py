"""Hidden check: LRI/LRU update with no, keyword-only or self sources"""

from boltons.cacheutils import LRI, LRU


def test_empty_and_keyword_updates():
    c = LRI(4)
    c.update()
    assert dict(c) == {}
    d = LRU(4)
    d.update(x=1, y=2)
    assert sorted(d.items()) == [("x", 1), ("y", 2)]


def test_update_from_itself_with_keywords():
    c = LRI(4, values={"a": 1})
    c.update(c, b=2)
    assert sorted(c.items()) == [("a", 1), ("b", 2)]
