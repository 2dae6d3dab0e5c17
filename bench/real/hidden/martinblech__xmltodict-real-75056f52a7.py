"""Hidden check: comments that would break out are refused"""

import pytest

import xmltodict


def test_double_hyphen():
    with pytest.raises(ValueError):
        xmltodict.unparse({"#comment": "a--b", "r": "1"})


def test_trailing_hyphen():
    with pytest.raises(ValueError):
        xmltodict.unparse({"r": {"#comment": "ends-"}}, full_document=False)


def test_single_hyphens_are_fine():
    assert xmltodict.unparse({"r": {"#comment": "fine - ok"}}, full_document=False) == "<r><!--fine - ok--></r>"
