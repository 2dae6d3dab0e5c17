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


def test_bulk_update_after_a_single_discard():
    # A single discard leaves a hole in the item list; a bulk update must not keep it.
    s = IndexedSet(range(1000))
    s.discard(1)
    s.difference_update(range(0, 1000, 2))
    assert len(s) == 499 and list(s)[:3] == [3, 5, 7]
    t = IndexedSet(range(10))
    t.discard(3)
    t.difference_update([])
    assert len(t) == 9 and list(t) == [0, 1, 2, 4, 5, 6, 7, 8, 9]
