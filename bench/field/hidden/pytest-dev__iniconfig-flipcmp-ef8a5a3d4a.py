"""Hidden check: indented lines continue the preceding value, and are an error with no value before them"""

import pytest

from iniconfig import IniConfig, ParseError


def test_continuation_lines_join_the_value():
    config = IniConfig(
        "x.ini",
        data="[tool]\naddopts = -ra\n  -q\n\tverbose\nother = 1\n[b]\nk=\n",
    )
    assert config["tool"]["addopts"] == "-ra\n-q\nverbose"
    assert config["tool"]["other"] == "1"
    assert config["b"]["k"] == ""
    assert config.lineof("tool", "other") == 5


def test_continuation_after_second_section_header_is_an_error():
    with pytest.raises(ParseError) as info:
        IniConfig("x.ini", data="[a]\nx = 1\n[b]\n  stray\n")
    assert info.value.lineno == 3
    assert info.value.msg == "unexpected value continuation"
    assert str(info.value) == "x.ini:4: unexpected value continuation"


def test_leading_indented_line_is_an_error():
    with pytest.raises(ParseError) as info:
        IniConfig("x.ini", data="   lead\n[a]\n")
    assert info.value.lineno == 0
    assert info.value.msg == "unexpected value continuation"
