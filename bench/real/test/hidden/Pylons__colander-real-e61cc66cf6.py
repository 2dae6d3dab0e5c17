"""Hidden check: colander.All copes with sub-validators whose msg is None or a list"""

import colander
import pytest


def _raise(msg):
    def validator(node, value):
        raise colander.Invalid(node, msg)

    return validator


def test_none_and_list_messages_are_flattened():
    node = colander.SchemaNode(colander.String(), name="f")
    validator = colander.All(_raise(None), _raise(["one", "two"]), _raise("three"))
    with pytest.raises(colander.Invalid) as info:
        validator(node, "x")
    assert info.value.msg == ["one", "two", "three"]
    assert info.value.asdict() == {"f": "one; two; three"}


def test_schema_field_with_all_none_message():
    class Schema(colander.MappingSchema):
        name = colander.SchemaNode(
            colander.String(), validator=colander.All(_raise(None), colander.Length(max=2))
        )

    with pytest.raises(colander.Invalid) as info:
        Schema().deserialize({"name": "long"})
    assert info.value.asdict() == {"name": "Longer than maximum length 2"}
