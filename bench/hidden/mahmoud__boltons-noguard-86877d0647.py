"""Hidden check: tokenize_format_str on literals and fields"""

from boltons.formatutils import tokenize_format_str


def test_literal_only():
    assert [str(t) for t in tokenize_format_str("plain text")] == ["plain text"]


def test_literals_between_fields():
    assert [str(t) for t in tokenize_format_str("a{}b{x:>3}c")] == ["a", "{0}", "b", "{x:>3}", "c"]
