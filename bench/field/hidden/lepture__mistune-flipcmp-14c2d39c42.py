"""Hidden check: the RST renderer separates a block quote with `..` only after a block that would absorb it"""

import mistune
from mistune.renderers.rst import RSTRenderer


def render(text):
    return mistune.create_markdown(renderer=RSTRenderer())(text)


def test_quote_after_code_block_and_list_gets_separator():
    assert render("```\ncode\n```\n\n> after code") == "::\n\n   code\n\n\n..\n\n   after code\n"
    assert render("1. a\n\n> after list") == "1. a\n\n..\n\n   after list\n"


def test_three_quotes_in_a_row():
    assert render("> one\n\n> two\n\n> three") == "   one\n\n..\n\n   two\n\n..\n\n   three\n"


def test_quote_after_heading_or_rule_has_no_separator():
    assert render("# Title\n\n> under heading") == "Title\n=====\n\n   under heading\n"
    assert render("---\n\n> after rule") == "--------------\n\n   after rule\n"
