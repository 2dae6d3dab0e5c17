"""Hidden check: boolean options other than cache/use_bytes/propagate_positions are normalised
to bool, while those three keep the value given"""

from lark import Lark

GRAMMAR = 'start: "a"+'


def test_truthy_option_becomes_bool():
    p = Lark(GRAMMAR, parser="lalr", keep_all_tokens=1, maybe_placeholders=0)
    assert p.options.keep_all_tokens is True
    assert p.options.maybe_placeholders is False


def test_the_three_keep_their_value():
    p = Lark(GRAMMAR, parser="lalr", propagate_positions=lambda n: True)
    assert callable(p.options.propagate_positions)
