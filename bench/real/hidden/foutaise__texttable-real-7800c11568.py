"""Hidden check: add_rows takes its header from any iterator"""

from texttable import Texttable


def test_list_iterator_with_header():
    out = Texttable().add_rows(iter([["h1", "h2"], [1, 2]])).draw()
    assert out == "+----+----+\n| h1 | h2 |\n+====+====+\n| 1  | 2  |\n+----+----+"


def test_map_object_with_header():
    out = Texttable().add_rows(map(list, [("x",), ("y",)])).draw()
    assert out == "+---+\n| x |\n+===+\n| y |\n+---+"
