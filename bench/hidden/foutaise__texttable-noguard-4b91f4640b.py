"""Hidden check: explicit column widths wrap cells"""

from texttable import Texttable


def test_set_cols_width_wraps():
    t = Texttable()
    t.set_cols_width([3, 4])
    t.add_rows([["ab", "cdefgh"], ["x", "y"]])
    lines = t.draw().splitlines()
    assert lines[0] == "+-----+------+"
    assert lines[1] == "| ab  | cdef |"
    assert lines[2] == "|     |  gh  |"
