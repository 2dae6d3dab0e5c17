"""Hidden check: MarkdownRenderer keeps a list item's indentation for GFM tables and blank lines"""

import marko
from marko.ext.gfm import GFM
from marko.md_renderer import MarkdownRenderer


def md():
    return marko.Markdown(renderer=MarkdownRenderer, extensions=[GFM])


def test_table_in_ordered_list_item():
    text = '1. one\n\n   | a | b |\n   |---|---|\n   | 1 | 2 |\n'
    assert md()(text) == '1. one\n\n   | a | b |\n   | --- | --- |\n   | 1 | 2 |\n'


def test_loose_list_item_blank_line_has_no_trailing_spaces():
    assert md()('- a\n\n  b\n') == '- a\n\n  b\n'


def test_table_in_nested_list_round_trips():
    text = '- outer\n  - inner\n\n    | h |\n    |---|\n    | v |\n'
    out = md()(text)
    assert out == '- outer\n  - inner\n\n    | h |\n    | --- |\n    | v |\n'
    assert md()(out) == out
