"""Hidden check: exceeding the grouping limits raises SQLParseError"""

import pytest

import sqlparse
from sqlparse.exceptions import SQLParseError


def test_deep_nesting_raises_on_parse():
    with pytest.raises(SQLParseError, match=r'Maximum grouping depth exceeded \(100\)'):
        sqlparse.parse('select ' + '(' * 150 + '1' + ')' * 150)


def test_too_many_tokens_raises_on_format():
    with pytest.raises(SQLParseError, match=r'Maximum number of tokens exceeded \(10000\)'):
        sqlparse.format('select ' + 'x, ' * 12000 + 'y', reindent=True)


def test_small_statement_still_parses():
    sql = 'select 1 where a in (' + ', '.join('(%d)' % i for i in range(20)) + ')'
    assert str(sqlparse.parse(sql)[0]) == sql
    with pytest.raises(SQLParseError):
        sqlparse.format('select ' + '(' * 120 + 'a' + ')' * 120, strip_comments=True)
