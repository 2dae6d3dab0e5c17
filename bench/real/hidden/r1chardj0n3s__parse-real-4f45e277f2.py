"""Hidden check: fields after a %z field read their own text"""

import parse


def test_fixed_field_after_an_offset():
    assert parse.parse("{:%z} {}", "+0130 tail")[1] == "tail"


def test_typed_field_after_a_date_with_offset():
    assert parse.parse("{:%d/%m/%Y %z}|{:d}", "03/04/2024 -0845|17")[1] == 17
    assert parse.parse("{}@{:%H%M%z}@{}", "x@1200+01:00@y").fixed[2] == "y"
