"""Hidden check: a custom block element with breaks_paragraph ends a paragraph"""

import re

import marko
from marko import block


class Note(block.BlockElement):
    breaks_paragraph = True
    pattern = re.compile(r' {,3}!!! (.*)', flags=re.M)

    def __init__(self, match):
        self.inline_body = match.group(1).strip()

    @classmethod
    def match(cls, source):
        return source.expect_re(cls.pattern)

    @classmethod
    def parse(cls, source):
        m = source.match
        source.consume()
        return m


class Plain(Note):
    breaks_paragraph = False
    pattern = re.compile(r' {,3}%%% (.*)', flags=re.M)


def parse(text, *elements):
    return marko.Markdown(extensions=[marko.MarkoExtension(elements=list(elements))]).parse(text)


def test_custom_element_interrupts_paragraph():
    doc = parse('first line\nsecond line\n!!! attention\n', Note)
    kinds = [type(c).__name__ for c in doc.children]
    assert kinds == ['Paragraph', 'Note', 'BlankLine']


def test_element_without_flag_does_not_interrupt():
    doc = parse('para\n%%% not a block\n!!! a block\n', Plain, Note)
    kinds = [type(c).__name__ for c in doc.children]
    assert kinds == ['Paragraph', 'Note', 'BlankLine']


def test_flags_of_builtin_elements():
    assert block.BlockElement.breaks_paragraph is False
    assert block.Heading.breaks_paragraph and block.Quote.breaks_paragraph
    assert block.FencedCode.breaks_paragraph and block.BlankLine.breaks_paragraph
    assert block.List.breaks_paragraph is False
