"""Hidden check: number types serialize None to colander.null"""

import decimal

import colander
import pytest


@pytest.mark.parametrize("typ", [colander.Float(), colander.Int(), colander.Decimal(), colander.Money()])
def test_none_serializes_to_null(typ):
    node = colander.SchemaNode(typ)
    assert typ.serialize(node, None) is colander.null
    assert node.serialize(None) is colander.null


def test_mapping_with_none_numbers():
    class Schema(colander.MappingSchema):
        price = colander.SchemaNode(colander.Decimal())
        count = colander.SchemaNode(colander.Int())

    assert Schema().serialize({"price": None, "count": 3}) == {"price": colander.null, "count": "3"}
    assert Schema().serialize({"price": decimal.Decimal("1.5"), "count": None}) == {"price": "1.5", "count": colander.null}
