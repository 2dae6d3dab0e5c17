"""Hidden check: `KEY= # comment` parses as an empty value"""

import io

from dotenv import dotenv_values
from dotenv.parser import parse_stream


def _values(text):
    return dotenv_values(stream=io.StringIO(text))


def test_empty_values_with_comments_between_other_keys():
    text = "FIRST=1\nEMPTY=   # nothing here\nLAST=3 # trailing\n"
    assert _values(text) == {"FIRST": "1", "EMPTY": "", "LAST": "3"}


def test_exported_and_spaced_keys():
    assert _values("export TOKEN= #unset\n") == {"TOKEN": ""}
    assert _values("NAME =  # blank\r\nOTHER=#hash") == {"NAME": "", "OTHER": "#hash"}


def test_binding_value_and_original_text():
    bindings = list(parse_stream(io.StringIO("K= ## doc\nJ=x\n")))
    assert [(b.key, b.value, b.error) for b in bindings] == [("K", "", False), ("J", "x", False)]
    assert bindings[0].original.string == "K= ## doc\n"
