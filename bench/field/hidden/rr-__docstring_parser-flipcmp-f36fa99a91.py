"""Hidden check: epydoc parsing of a description with no second line (one-liner or meta-only docstring) leaves the long description empty"""

from docstring_parser import DocstringStyle, parse as generic_parse
from docstring_parser.epydoc import compose, parse


def test_one_line_description():
    doc = parse("Compute the checksum of a buffer.")
    assert doc.short_description == "Compute the checksum of a buffer."
    assert doc.long_description is None
    assert doc.blank_after_short_description is False
    assert doc.params == []


def test_meta_only_docstring():
    doc = parse("@param count: how many items\n@rtype: int")
    assert doc.short_description is None
    assert doc.long_description is None
    assert [p.arg_name for p in doc.params] == ["count"]
    assert doc.params[0].description == "how many items"
    assert doc.returns.type_name == "int"


def test_generic_parse_and_compose_one_liner():
    doc = generic_parse("    Flush pending writes.", style=DocstringStyle.EPYDOC)
    assert doc.short_description == "Flush pending writes."
    assert doc.long_description is None
    assert compose(parse("Flush pending writes.")) == "Flush pending writes."

    multi = parse("Head line.\n\nBody text here.\n@return: nothing")
    assert multi.short_description == "Head line."
    assert multi.long_description == "Body text here."
    assert multi.blank_after_short_description is True
