"""Hidden check: format_int_list separates ranges without spaces by default"""

from boltons.strutils import format_int_list


def test_default_delimiters():
    assert format_int_list([7, 8, 9, 12, 20, 21]) == "7-9,12,20-21"


def test_custom_delimiter():
    assert format_int_list([3, 1, 2, 10], delim=";") == "1-3;10"
    assert format_int_list([1, 2, 4], delim_space=True) == "1-2, 4"
