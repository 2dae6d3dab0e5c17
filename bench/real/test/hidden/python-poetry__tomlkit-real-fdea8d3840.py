"""Hidden check: deleting an array slice with negative or omitted bounds"""

import tomlkit


def fresh():
    return tomlkit.parse('arr = [0, 1, 2, 3, 4, 5, 6]\n')


def test_negative_start():
    doc = fresh()
    del doc['arr'][-3:]
    assert doc.as_string() == 'arr = [0, 1, 2, 3]\n'
    assert tomlkit.parse(doc.as_string())['arr'] == [0, 1, 2, 3]


def test_negative_stop():
    doc = fresh()
    del doc['arr'][:-4]
    assert doc.as_string() == 'arr = [3, 4, 5, 6]\n'
    assert list(doc['arr']) == [3, 4, 5, 6]


def test_negative_step_and_bounds():
    doc = fresh()
    del doc['arr'][-2:-6:-2]
    assert list(doc['arr']) == [0, 1, 2, 4, 6]
    assert doc.as_string() == 'arr = [0, 1, 2, 4, 6]\n'
