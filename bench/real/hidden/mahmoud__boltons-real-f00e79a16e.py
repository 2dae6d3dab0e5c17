"""Hidden check: Table.to_text on empty tables and non-string headers"""

from boltons.tableutils import Table


def test_empty_table():
    assert Table([]).to_text() == ""


def test_none_header():
    assert Table([["x"]], headers=[None]).to_text() == "None\n----\n x  "


def test_wider_header():
    assert Table([[1, 22]], headers=["first", "b"]).to_text() == "first | b \n------|---\n  1   | 22"
