"""Hidden check: arithmetic on a signed float never renders +-0.0"""

import tomlkit


def test_explicit_plus_times_negative_zero():
    doc = tomlkit.parse('a = +2.5\n')
    r = doc['a'] * -0.0
    assert r.as_string() == '-0.0'
    assert tomlkit.parse('v = ' + r.as_string())['v'] == 0.0


def test_result_stored_back_round_trips():
    doc = tomlkit.parse('a = +3.0\nb = 1\n')
    doc['a'] = doc['a'] * -0.0
    text = doc.as_string()
    assert text == 'a = -0.0\nb = 1\n'
    assert tomlkit.parse(text)['a'] == 0.0


def test_positive_results_keep_plus_sign():
    doc = tomlkit.parse('a = +4.0\n')
    assert (doc['a'] / -1e308 * 0).as_string() == '-0.0'
    assert (doc['a'] + 1).as_string() == '+5.0'
