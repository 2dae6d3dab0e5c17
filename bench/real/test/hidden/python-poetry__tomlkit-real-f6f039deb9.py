"""Hidden check: Bool items compare equal by value"""

import tomlkit


def test_parsed_bool_items_compare_by_value():
    doc = tomlkit.parse('p = false\nq = false\nr = true\n')
    assert doc.item('p') == doc.item('q')
    assert not (doc.item('p') == doc.item('r'))
    assert doc.item('p') != doc.item('r')


def test_constructed_bools():
    assert tomlkit.boolean('true') == tomlkit.item(True)
    assert tomlkit.item(False) == tomlkit.item(False)
    assert (tomlkit.item(False) != tomlkit.item(False)) is False


def test_lists_of_bool_items():
    assert [tomlkit.item(True), tomlkit.item(False)] == [tomlkit.item(True), tomlkit.item(False)]
    assert tomlkit.item(True) in [tomlkit.item(False), tomlkit.item(True)]
