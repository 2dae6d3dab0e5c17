"""Hidden check: the First() aggregator keeps the first value it sees in Group mode"""

from glom import T, glom
from glom.grouping import First, Group


def test_first_of_a_sequence():
    assert glom(["b", "a", "c"], Group(First())) == "b"
    assert glom((x * x for x in range(3, 7)), Group(First())) == 9
    assert glom([5], Group(First())) == 5


def test_first_record_per_key():
    records = [
        {"k": "x", "v": 1},
        {"k": "y", "v": 2},
        {"k": "x", "v": 3},
        {"k": "y", "v": 4},
    ]
    assert glom(records, Group({T["k"]: First()})) == {
        "x": {"k": "x", "v": 1},
        "y": {"k": "y", "v": 2},
    }


def test_first_inside_a_list_spec():
    assert glom(range(4, 9), Group([First()])) == [4]
