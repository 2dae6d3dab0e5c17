"""Hidden check: redrawing after changing characters or widths"""

from texttable import Texttable


def test_new_chars_after_a_draw():
    t = Texttable().add_rows([["H"], ["v"]])
    t.draw()
    t.set_chars(["=", "|", "+", "-"])
    assert t.draw() == "+===+\n| H |\n+---+\n| v |\n+===+"


def test_new_width_after_a_draw():
    t = Texttable().add_rows([["Head"], ["val"]])
    t.draw()
    t.set_cols_width([2])
    assert t.draw().splitlines()[0] == "+----+"
