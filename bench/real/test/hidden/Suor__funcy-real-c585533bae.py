"""Hidden check: cut_suffix() with an empty suffix returns the string unchanged"""

from funcy import cut_prefix, cut_suffix


def test_empty_suffix():
    assert cut_suffix("abc", "") == "abc"
    assert cut_suffix("x", "") == "x"


def test_empty_suffix_on_empty_string():
    assert cut_suffix("", "") == ""


def test_other_suffixes_unchanged():
    assert cut_suffix("a.py", ".py") == "a"
    assert cut_suffix("a.py", ".txt") == "a.py"
    assert cut_prefix("abc", "") == "abc"
