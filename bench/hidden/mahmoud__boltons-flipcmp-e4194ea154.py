"""Hidden check: BarrelList.pop with an index"""

from boltons.listutils import BarrelList


def test_pop_by_index():
    b = BarrelList("abcd")
    assert b.pop(1) == "b"
    assert list(b) == ["a", "c", "d"]


def test_pop_first_then_last():
    b = BarrelList(range(5))
    assert (b.pop(0), b.pop()) == (0, 4)
    assert list(b) == [1, 2, 3]
