"""Hidden check: String + str escapes the appended text in basic strings"""

import tomlkit


def test_append_quote_round_trips():
    doc = tomlkit.document()
    doc['k'] = tomlkit.string('say ')
    doc['k'] = doc['k'] + '"hi"'
    assert doc.as_string() == 'k = "say \\"hi\\""\n'
    assert tomlkit.parse(doc.as_string())['k'] == 'say "hi"'


def test_append_backslash_and_tab():
    s = tomlkit.string('a') + '\\b\t'
    assert s.as_string() == '"a\\\\b\\t"'
    assert str(s) == 'a\\b\t'


def test_append_newline_and_triple_quote():
    assert tomlkit.string('line').__add__('\n2').as_string() == '"line\\n2"'
    ml = tomlkit.string('m', multiline=True) + '"""'
    assert ml.as_string() == '"""m""\\""""'
    assert tomlkit.parse('v = ' + ml.as_string())['v'] == 'm"""'
