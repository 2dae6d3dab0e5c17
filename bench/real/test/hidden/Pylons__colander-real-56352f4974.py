"""Hidden check: DateTime with a custom format turns wrong input types into Invalid"""

import colander
import pytest


def _node(fmt="%Y-%m-%d %H:%M"):
    return colander.SchemaNode(colander.DateTime(format=fmt), name="when")


@pytest.mark.parametrize("value", [20240131, 3.5, ["2024-01-31 10:00"], b"2024-01-31 10:00"])
def test_wrong_types_are_invalid(value):
    with pytest.raises(colander.Invalid) as info:
        _node().deserialize(value)
    assert info.value.node.name == "when"


def test_in_a_mapping_error_is_reported_per_field():
    class Schema(colander.MappingSchema):
        start = colander.SchemaNode(colander.DateTime(format="%d/%m/%Y %H:%M"))

    with pytest.raises(colander.Invalid) as info:
        Schema().deserialize({"start": 1234})
    assert list(info.value.asdict()) == ["start"]
    ok = Schema().deserialize({"start": "31/01/2024 10:30"})
    assert (ok["start"].year, ok["start"].minute) == (2024, 30)
