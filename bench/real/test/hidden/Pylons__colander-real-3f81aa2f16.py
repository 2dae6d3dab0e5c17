"""Hidden check: deferred child nodes honour insert_before when bound"""

import colander


def _schema():
    @colander.deferred
    def extra(node, kw):
        return colander.SchemaNode(colander.String(), insert_before=kw["before"])

    class Schema(colander.MappingSchema):
        a = colander.SchemaNode(colander.Int())
        b = colander.SchemaNode(colander.Int())
        c = colander.SchemaNode(colander.Int())
        late_field = extra

    return Schema()


def test_inserted_before_named_sibling():
    bound = _schema().bind(before="b")
    assert [n.name for n in bound.children] == ["a", "late_field", "b", "c"]
    bound = _schema().bind(before="a")
    assert [n.name for n in bound.children] == ["late_field", "a", "b", "c"]


def test_bound_node_gets_name_and_title():
    bound = _schema().bind(before="c")
    node = bound["late_field"]
    assert node.name == "late_field"
    assert node.title == "Late Field"
    assert [n.name for n in bound.children][2] == "late_field"
