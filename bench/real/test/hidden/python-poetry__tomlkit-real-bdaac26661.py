"""Hidden check: results of arithmetic/replace() don't share the item's Trivia"""

import datetime

import tomlkit


def test_integer_result_comment_does_not_touch_document():
    doc = tomlkit.parse('x = 5 # five\n')
    r = doc['x'] + 1
    r.comment('six')
    assert doc.as_string() == 'x = 5 # five\n'
    assert r.as_string() == '6'


def test_string_and_float_result_indent():
    doc = tomlkit.parse('s = "a" # s\ny = 1.5\n')
    r = doc['s'] + 'b'
    r.trivia.indent = '  '
    f = doc['y'] * 2
    f.trivia.indent = '\t'
    assert doc.as_string() == 's = "a" # s\ny = 1.5\n'


def test_datetime_date_time_replace():
    doc = tomlkit.parse('d = 2020-01-02 # day\nt = 10:00:00\ndt = 2020-01-02T03:04:05 # dt\n')
    nd = doc['d'].replace(day=5)
    nd.comment('other')
    nt = doc['t'].replace(hour=11)
    nt.trivia.indent = '    '
    ndt = doc['dt'] + datetime.timedelta(days=1)
    ndt.comment('later')
    assert doc.as_string() == 'd = 2020-01-02 # day\nt = 10:00:00\ndt = 2020-01-02T03:04:05 # dt\n'
