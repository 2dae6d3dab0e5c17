"""Hidden check: an underscore that cannot open emphasis does not break the outer emphasis"""

import marko


def test_em_with_inner_underscore():
    assert marko.convert('*x_{y}*') == '<p><em>x_{y}</em></p>\n'


def test_strong_with_trailing_underscore_word():
    assert marko.convert('**foo_ bar**') == '<p><strong>foo_ bar</strong></p>\n'


def test_strong_in_sentence():
    out = marko.convert('see **n_(i) here** now')
    assert out == '<p>see <strong>n_(i) here</strong> now</p>\n'
