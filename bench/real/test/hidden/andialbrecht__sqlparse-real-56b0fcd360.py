"""Hidden check: get_real_name() of a name with several dots is its last part"""

import sqlparse


def ident(sql, idx=0):
    return sqlparse.parse(sql)[0].tokens[idx]


def test_four_part_name_in_select():
    i = ident('select a.b.c.d from t', 2)
    assert i.get_real_name() == 'd'
    assert i.get_name() == 'd'
    assert i.get_parent_name() == 'a'
    assert i.get_alias() is None


def test_three_part_name_with_alias():
    i = ident('select s.t.u as v from x', 2)
    assert i.get_real_name() == 'u'
    assert i.get_alias() == 'v'
    assert i.get_name() == 'v'


def test_three_part_bare_name():
    i = ident('cat.sch.tbl')
    assert (i.get_real_name(), i.get_parent_name()) == ('tbl', 'cat')
    # two parts keep working
    assert ident('sch.tbl').get_real_name() == 'tbl'
