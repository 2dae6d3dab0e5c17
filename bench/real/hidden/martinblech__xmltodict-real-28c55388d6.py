"""Hidden check: None text and attributes unparse as empty"""

import xmltodict


def test_none_attribute_beside_a_child():
    assert xmltodict.unparse({"r": {"@a": None, "c": "x"}}, full_document=False) == '<r a=""><c>x</c></r>'


def test_none_text_beside_an_attribute():
    assert xmltodict.unparse({"r": {"#text": None, "@b": "1"}}, full_document=False) == '<r b="1"></r>'


def test_none_namespace_and_list_items():
    assert xmltodict.unparse({"r": {"@xmlns": {"p": None}}}, full_document=False) == '<r xmlns:p=""></r>'
    assert xmltodict.unparse({"q": [None, {"#text": None}]}, full_document=False) == "<q></q><q></q>"
