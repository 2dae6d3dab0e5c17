"""Hidden check: backslashes survive set_key/get_key and quoted values ending in one parse"""

import io

import pytest

from dotenv import dotenv_values, get_key, set_key


@pytest.mark.parametrize("value", ["D:\\data\\", "x\\\\y", "C:\\new\\", "a\\\\", "\\"])
def test_round_trip(tmp_path, value):
    path = tmp_path / "rt.env"
    path.write_text("")
    set_key(path, "V", value)
    set_key(path, "AFTER", "ok")
    assert get_key(path, "V") == value
    assert get_key(path, "AFTER") == "ok"


def test_written_text_escapes_backslashes(tmp_path):
    path = tmp_path / "w.env"
    path.write_text("")
    set_key(path, "P", "C:\\tmp")
    assert path.read_text() == "P='C:\\\\tmp'\n"


def test_escaped_backslash_before_closing_quote():
    text = "A='end\\\\'\nB='two'\nC=\"x\\\\\"\nD=\"y\"\n"
    assert dotenv_values(stream=io.StringIO(text)) == {"A": "end\\", "B": "two", "C": "x\\", "D": "y"}
