"""Hidden check: merging import maps keeps the other map's integrity hashes, through update() and |"""

import django
from django.conf import settings

if not settings.configured:
    settings.configure()
    django.setup()

from js_asset.js import ImportMap  # noqa: E402


def test_update_takes_the_other_maps_integrity():
    m = ImportMap({"imports": {"x": "/s/x.js"}})
    m.update({"imports": {"y": "/s/y.js"}, "integrity": {"/s/y.js": "sha384-y"}})
    assert m._importmap["integrity"] == {"/s/y.js": "sha384-y"}
    assert m._importmap["imports"] == {"x": "/s/x.js", "y": "/s/y.js"}


def test_or_keeps_both_integrity_tables():
    a = ImportMap({"integrity": {"/a.js": "sha384-a"}})
    b = ImportMap({"integrity": {"/b.js": "sha384-b"}})
    assert '"integrity": {"/a.js": "sha384-a", "/b.js": "sha384-b"}' in str(a | b)


def test_an_empty_integrity_table_adds_nothing():
    m = ImportMap({"imports": {"x": "/x.js"}})
    m.update({"integrity": {}})
    assert "integrity" not in m._importmap
