"""Hidden check: a single-line array ending in a comment closes on its own line"""

import tomlkit


def test_empty_array_add_line_with_comment():
    a = tomlkit.array()
    a.add_line('x', comment='first')
    assert a.as_string() == '[\n    "x", # first\n]'


def test_document_round_trip():
    doc = tomlkit.document()
    a = tomlkit.array('[1, 2]')
    a.add_line(3, comment='three')
    doc['nums'] = a
    text = tomlkit.dumps(doc)
    assert tomlkit.parse(text)['nums'] == [1, 2, 3]
    assert text == 'nums = [1, 2,\n    3, # three\n]\n'


def test_two_commented_lines():
    a = tomlkit.array()
    a.add_line(1, comment='one')
    a.add_line(2, comment='two')
    s = a.as_string()
    assert s.endswith('# two\n]')
    assert tomlkit.parse('v = ' + s)['v'] == [1, 2]
