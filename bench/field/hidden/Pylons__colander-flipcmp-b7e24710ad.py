"""Hidden check: Boolean serializes truthy/falsy values to its true/false values and null to null"""

import colander


class Flags(colander.MappingSchema):
    flag = colander.SchemaNode(colander.Boolean())
    switch = colander.SchemaNode(colander.Boolean(false_val="off", true_val="on"))


def test_schema_serializes_truthiness():
    assert Flags().serialize({"flag": [], "switch": "x"}) == {"flag": "false", "switch": "on"}
    assert Flags().serialize({"flag": 2.5, "switch": 0}) == {"flag": "true", "switch": "off"}


def test_missing_values_serialize_to_null():
    assert Flags().serialize({}) == {"flag": colander.null, "switch": colander.null}


def test_non_string_true_and_false_values():
    node = colander.SchemaNode(colander.Boolean(true_val=1, false_val=0))
    assert node.serialize(True) == 1
    assert node.serialize("") == 0
    assert node.serialize(colander.null) is colander.null
