"""Hidden check: CREATE TABLE ... as SELECT groups functions whatever the case of AS"""

import sqlparse
from sqlparse import sql


def tokens(s):
    return [t for t in sqlparse.parse(s)[0].tokens if not t.is_whitespace]


def test_lowercase_as_groups_function():
    toks = tokens('create table t2 as select upper(name) from u')
    assert isinstance(toks[5], sql.Function)
    assert str(toks[5]) == 'upper(name)'


def test_mixed_case_as_groups_all_functions():
    toks = tokens('Create Table t2 As select max(x) as m, sum(y) from u')
    assert isinstance(toks[5], sql.IdentifierList)
    assert str(toks[5]) == 'max(x) as m, sum(y)'
    funcs = [t for t in toks[5].get_identifiers()]
    assert [type(f).__name__ for f in funcs] == ['Identifier', 'Function']


def test_function_alias_after_lowercase_as():
    toks = tokens('create table t3 as select count(*) as n from u')
    assert isinstance(toks[5], sql.Identifier)
    assert toks[5].get_alias() == 'n'
    assert isinstance(toks[5].tokens[0], sql.Function)
