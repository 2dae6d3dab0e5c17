"""Hidden check: namespace collapsing keeps the local name whole"""

import xmltodict


def test_namespace_dropped():
    xml = '<r xmlns:q="http://q/"><q:a>1</q:a></r>'
    out = xmltodict.parse(xml, process_namespaces=True, namespaces={"http://q/": None})
    assert out == {"r": {"a": "1"}}


def test_namespace_renamed():
    xml = '<r xmlns="http://d/"><b>2</b></r>'
    out = xmltodict.parse(xml, process_namespaces=True, namespaces={"http://d/": "z"})
    assert out == {"z:r": {"z:b": "2"}}
