"""Hidden check: round() of a Float without ndigits gives an Integer"""

import tomlkit
from tomlkit.items import Float, Integer


def test_round_half_to_even_and_negative():
    doc = tomlkit.parse('f = 2.5\ng = -3.7\n')
    r = round(doc['f'])
    assert isinstance(r, Integer) and r == 2 and r.as_string() == '2'
    s = round(doc['g'])
    assert isinstance(s, Integer) and s == -4 and s.as_string() == '-4'


def test_rounded_value_stored_in_document():
    doc = tomlkit.parse('n = 7.75 # approx\n')
    doc['n'] = round(doc['n'])
    assert doc.as_string() == 'n = 8 # approx\n'
    assert type(tomlkit.parse(doc.as_string())['n']) is Integer


def test_ndigits_zero_still_float_none_is_int():
    f = tomlkit.item(1.25)
    assert isinstance(round(f, 0), Float) and round(f, 0) == 1.0
    assert isinstance(round(f, 1), Float) and round(f, 1) == 1.2
    assert isinstance(round(f), Integer) and round(f) == 1
