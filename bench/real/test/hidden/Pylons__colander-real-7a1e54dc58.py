"""Hidden check: Date with a custom format turns mismatches and wrong types into Invalid"""

import datetime

import colander
import pytest


def _node(fmt="%d.%m.%Y"):
    return colander.SchemaNode(colander.Date(format=fmt), name="day")


@pytest.mark.parametrize("value", ["2024-01-31", "31.13.2024", "31.01.24x"])
def test_strings_not_matching_the_format(value):
    with pytest.raises(colander.Invalid):
        _node().deserialize(value)


@pytest.mark.parametrize("value", [31012024, ("31.01.2024",)])
def test_wrong_types(value):
    with pytest.raises(colander.Invalid):
        _node().deserialize(value)


def test_matching_value_and_mapping_error():
    assert _node().deserialize("31.01.2024") == datetime.date(2024, 1, 31)

    class Schema(colander.MappingSchema):
        due = colander.SchemaNode(colander.Date(format="%Y/%m/%d"))

    with pytest.raises(colander.Invalid) as info:
        Schema().deserialize({"due": "2024-01-31"})
    assert list(info.value.asdict()) == ["due"]
