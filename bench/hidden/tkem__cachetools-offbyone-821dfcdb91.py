"""Hidden check: TLRUCache expires exactly the items past their time"""

from cachetools import TLRUCache


class Clock:
    def __init__(self):
        self.t = 0

    def __call__(self):
        return self.t


def test_expire_by_per_item_ttu():
    clock = Clock()
    c = TLRUCache(10, ttu=lambda k, v, now: now + v, timer=clock)
    c["a"] = 1
    c["b"] = 5
    c["c"] = 3
    clock.t = 2
    c.expire()
    assert sorted(c) == ["b", "c"]


def test_expired_items_are_gone_on_read():
    clock = Clock()
    c = TLRUCache(10, ttu=lambda k, v, now: now + v, timer=clock)
    c["x"] = 4
    c["y"] = 1
    clock.t = 2
    assert sorted(c) == ["x"]
