"""Hidden check: emptying or overwriting one part of an out-of-order table drops that part from the document"""

import json

import tomlkit


def test_delete_subtable_that_forms_a_later_part():
    doc = tomlkit.parse(
        '[server]\nhost = "h"\n\n[client]\nid = 1\n\n[server.tls]\ncert = "c"\n'
    )
    del doc["server"]["tls"]
    assert doc.as_string() == '[server]\nhost = "h"\n\n[client]\nid = 1\n\n'
    assert json.loads(json.dumps(doc)) == {"server": {"host": "h"}, "client": {"id": 1}}


def test_overwrite_key_spread_over_two_parts():
    doc = tomlkit.parse("[a.t.p]\nv = 1\n[b]\nw = 2\n[a.t.q]\nv = 3\n")
    doc["a"]["t"] = {"z": 9}
    assert doc.as_string() == "[a.t]\nz = 9\n[b]\nw = 2\n"
    assert doc.unwrap() == {"a": {"t": {"z": 9}}, "b": {"w": 2}}


def test_pop_then_delete_until_part_is_empty():
    doc = tomlkit.parse(
        "[x.one]\nk = 1\n[y]\nm = 2\n[x.two]\nk = 2\n[x.three]\nk = 3\n"
    )
    assert doc["x"].pop("two") == {"k": 2}
    del doc["x"]["three"]
    assert doc.as_string() == "[x.one]\nk = 1\n[y]\nm = 2\n"
    assert tomlkit.parse(doc.as_string()).unwrap() == {"x": {"one": {"k": 1}}, "y": {"m": 2}}
