"""Hidden check: with create=True, an index equal to an array's length appends a new element
(nested and at the end of the pointer alike), like "-" does"""

from jsonpointer import set_pointer


def test_index_at_the_end_appends_a_nested_member():
    doc = {"items": [{"a": 1}, {"a": 2}]}
    assert set_pointer(doc, "/items/2/a", 3, create=True) == {
        "items": [{"a": 1}, {"a": 2}, {"a": 3}]
    }


def test_index_at_the_end_matches_dash():
    by_index = set_pointer({"x": [[1], [2]]}, "/x/2/0", 9, inplace=False, create=True)
    by_dash = set_pointer({"x": [[1], [2]]}, "/x/-/0", 9, inplace=False, create=True)
    assert by_index == by_dash
