"""Hidden check: zero-precision floats match integers only"""

import parse


def test_integer_text_matches():
    assert parse.parse("{:.0f}", "7")[0] == 7.0
    assert parse.parse("x {:.0f} y", "x 40 y")[0] == 40.0


def test_decimal_text_does_not_match():
    assert parse.parse("{:.0f}", "7.5") is None
