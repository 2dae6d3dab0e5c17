"""Hidden check: an unparse preprocessor can drop keys"""

import xmltodict


def test_preprocessor_drops_a_key():
    def pre(key, value):
        return None if key == "drop" else (key, value)

    out = xmltodict.unparse({"a": {"keep": "1", "drop": "2"}}, preprocessor=pre, full_document=False)
    assert out == "<a><keep>1</keep></a>"
