"""Hidden check: default=drop affects serialization only, missing=drop deserialization"""

import colander
import pytest


class Item(colander.MappingSchema):
    title = colander.SchemaNode(colander.String())
    note = colander.SchemaNode(colander.String(), default=colander.drop)


def test_mapping_child_with_default_drop_is_still_required():
    with pytest.raises(colander.Invalid) as info:
        Item().deserialize({"title": "t"})
    assert info.value.asdict() == {"note": "Required"}
    assert Item().serialize({"title": "t"}) == {"title": "t"}


def test_sequence_item_with_default_drop():
    seq = colander.SchemaNode(
        colander.Sequence(), colander.SchemaNode(colander.Int(), default=colander.drop)
    )
    with pytest.raises(colander.Invalid):
        seq.deserialize(["1", colander.null])
    assert seq.serialize([1, colander.null]) == ["1"]


def test_missing_drop_still_drops():
    class Other(colander.MappingSchema):
        opt = colander.SchemaNode(colander.String(), missing=colander.drop)
        req = colander.SchemaNode(colander.Int(), default=colander.drop)

    assert Other().deserialize({"req": "2"}) == {"req": 2}
    with pytest.raises(colander.Invalid):
        Other().deserialize({})
