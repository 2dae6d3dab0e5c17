"""Hidden check: whitespace-only text is dropped, other text stripped"""

import xmltodict


def test_whitespace_only_leaf():
    assert xmltodict.parse("<a>\n  <b>   </b>\n</a>") == {"a": {"b": None}}
    assert xmltodict.parse("<x>\t\n</x>") == {"x": None}


def test_padded_text_and_opt_out():
    assert xmltodict.parse("<x> y </x>") == {"x": "y"}
    assert xmltodict.parse("<x>\t</x>", strip_whitespace=False) == {"x": "\t"}
