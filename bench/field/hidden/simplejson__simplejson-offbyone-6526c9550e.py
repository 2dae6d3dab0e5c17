"""Hidden check: the pure-Python scanner reads a bare NaN token (inside containers, with parse_constant, via raw_decode)"""

import math

import pytest

import simplejson
from simplejson import JSONDecoder


@pytest.fixture(autouse=True)
def pure_python_scanner():
    simplejson._toggle_speedups(False)
    try:
        yield
    finally:
        simplejson._toggle_speedups(True)


def test_nan_inside_array_and_object():
    doc = simplejson.loads('{"xs": [2.5, NaN, -7], "y": NaN}', allow_nan=True)
    assert doc["xs"][0] == 2.5 and doc["xs"][2] == -7
    assert math.isnan(doc["xs"][1])
    assert math.isnan(doc["y"])


def test_parse_constant_receives_nan_name():
    seen = []

    def constant(name):
        seen.append(name)
        return "<%s>" % name

    doc = simplejson.loads('[Infinity,NaN,-Infinity,NaN]', parse_constant=constant)
    assert doc == ["<Infinity>", "<NaN>", "<-Infinity>", "<NaN>"]
    assert seen == ["Infinity", "NaN", "-Infinity", "NaN"]


def test_raw_decode_stops_right_after_nan():
    value, end = JSONDecoder(allow_nan=True).raw_decode('  NaN, 42', 2)
    assert math.isnan(value)
    assert end == 5
