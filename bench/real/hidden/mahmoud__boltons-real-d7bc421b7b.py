"""Hidden check: parse_qsl decodes keys and values with its encoding"""

from boltons.urlutils import parse_qsl


def test_latin1():
    assert parse_qsl("n=%E9t%E9", encoding="latin-1") == [("n", "\u00e9t\u00e9")]
    assert parse_qsl("%FC=1", encoding="latin-1") == [("\u00fc", "1")]


def test_shift_jis_and_default():
    assert parse_qsl("x=%82%A0", encoding="shift_jis") == [("x", "\u3042")]
    assert parse_qsl("a=%C3%A9") == [("a", "\u00e9")]
