"""Hidden check: a table with only a header or only rows draws"""

from texttable import Texttable


def test_header_only():
    t = Texttable()
    t.header(["only"])
    assert t.draw() == "+------+\n| only |\n+======+\n+------+"


def test_rows_only():
    t = Texttable()
    t.add_rows([["a", "b"]], header=False)
    assert t.draw() == "+---+---+\n| a | b |\n+---+---+"


def test_empty_table_draws_nothing():
    assert Texttable().draw() is None
