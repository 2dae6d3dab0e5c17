"""Hidden check: automatic widths follow rows added after a draw"""

from texttable import Texttable


def test_longer_row_after_a_draw():
    t = Texttable().add_rows([["N"], ["a"]])
    t.draw()
    t.add_row(["longer"])
    assert t.draw().splitlines()[0] == "+--------+"
    assert "| longer |" in t.draw()


def test_two_columns_grow():
    t = Texttable().add_rows([["N", "M"], ["a", "b"]])
    t.draw()
    t.add_rows([["xyz", "uvw"]], header=False)
    assert t.draw().splitlines()[-2] == "| xyz | uvw |"
