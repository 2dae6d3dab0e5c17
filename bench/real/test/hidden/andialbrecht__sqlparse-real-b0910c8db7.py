"""Hidden check: ROW_FORMAT is a keyword"""

import sqlparse
from sqlparse import sql, tokens as T


def tokens(s):
    return [t for t in sqlparse.parse(s)[0].tokens if not t.is_whitespace]


def test_alter_table_qualified_name_row_format():
    toks = tokens('ALTER TABLE db.accounts ROW_FORMAT=COMPRESSED')
    assert isinstance(toks[2], sql.Identifier)
    assert toks[2].get_real_name() == 'accounts'
    assert toks[3].ttype is T.Keyword and toks[3].normalized == 'ROW_FORMAT'


def test_create_table_lowercase_row_format():
    toks = tokens('create table x (id int) row_format = dynamic')
    assert isinstance(toks[3], sql.Parenthesis)
    assert toks[4].ttype is T.Keyword
    assert toks[4].value == 'row_format'


def test_keyword_case_applies_to_row_format():
    out = sqlparse.format('alter table t row_format=compact', keyword_case='upper')
    assert out == 'ALTER TABLE t ROW_FORMAT=compact'
