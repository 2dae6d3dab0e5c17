"""Hidden check: unparse writes attributes"""

import xmltodict


def test_attribute_and_child():
    assert xmltodict.unparse({"a": {"@id": "7", "b": "x"}}, full_document=False) == '<a id="7"><b>x</b></a>'


def test_attribute_and_text():
    assert xmltodict.unparse({"p": {"@k": "v", "#text": "t"}}, full_document=False) == '<p k="v">t</p>'
