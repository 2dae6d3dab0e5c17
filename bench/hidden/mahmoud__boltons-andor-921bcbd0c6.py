"""Hidden check: IndexedSet bulk updates remove exactly the right items"""

from boltons.setutils import IndexedSet


def test_large_difference_update():
    s = IndexedSet(range(1000))
    s.difference_update(range(0, 1000, 2))
    assert len(s) == 500 and list(s)[:5] == [1, 3, 5, 7, 9]


def test_large_intersection_update():
    s = IndexedSet(range(900))
    s.intersection_update(range(100, 110))
    assert list(s) == list(range(100, 110))
