"""Hidden check: names with angle brackets are refused, values escaped"""

import pytest

import xmltodict


def test_element_name():
    with pytest.raises(ValueError):
        xmltodict.unparse({"a>b": 1}, full_document=False)


def test_attribute_and_namespace_names():
    with pytest.raises(ValueError):
        xmltodict.unparse({"r": {"@x<y": "1"}}, full_document=False)
    with pytest.raises(ValueError):
        xmltodict.unparse({"r": {"@xmlns": {"p>q": "u"}}}, full_document=False)


def test_values_are_escaped_not_refused():
    assert xmltodict.unparse({"r": {"@t": "a<b"}}, full_document=False) == '<r t="a&lt;b"></r>'
