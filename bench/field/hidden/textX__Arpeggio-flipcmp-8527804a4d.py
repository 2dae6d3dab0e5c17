"""Hidden check: PEG grammar suffixes `?` build an Optional and `#` an UnorderedGroup"""

import pytest

from arpeggio import NoMatch, Optional, UnorderedGroup
from arpeggio.cleanpeg import ParserPEG as CleanParserPEG
from arpeggio.peg import ParserPEG


def test_question_mark_is_optional():
    grammar = r'''
        greeting <- "hi" name? "!" EOF;
        name <- r'[a-z]+';
    '''
    parser = ParserPEG(grammar, "greeting")
    assert isinstance(parser.parser_model.nodes[1], Optional)
    assert str(parser.parse("hi bob !")) == "hi | bob | ! | "
    assert str(parser.parse("hi!")) == "hi | ! | "


def test_hash_is_unordered_group():
    grammar = r'''
        opts <- ("x" "y" "z")# EOF;
    '''
    parser = ParserPEG(grammar, "opts")
    assert isinstance(parser.parser_model.nodes[0], UnorderedGroup)
    for text in ("x y z", "z x y", "y z x"):
        assert "".join(str(parser.parse(text)).split(" | ")) == text.replace(" ", "")
    with pytest.raises(NoMatch):
        parser.parse("x y")


def test_clean_peg_optional_and_unordered():
    grammar = r'''
        line = "key" ("a" "b")# "end"? EOF
    '''
    parser = CleanParserPEG(grammar, "line")
    assert str(parser.parse("key b a end")) == "key | b | a | end | "
    assert str(parser.parse("key a b")) == "key | a | b | "
    with pytest.raises(NoMatch):
        parser.parse("key a end")
