"""Hidden check: IndexedSet indexing after scattered removals"""

from boltons.setutils import IndexedSet


def test_index_after_removals():
    s = IndexedSet("abcdefgh")
    for c in "bcf":
        s.remove(c)
    assert list(s) == ["a", "d", "e", "g", "h"]
    assert s.index("g") == 3 and s[3] == "g"


def test_getitem_after_discards():
    s = IndexedSet(range(10))
    for i in (2, 3, 7):
        s.discard(i)
    assert s[4] == 6 and s.index(9) == 6
