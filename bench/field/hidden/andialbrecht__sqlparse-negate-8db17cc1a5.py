"""Hidden check: sqlparse.format reindents statements only when reindent=True"""

import sqlparse


def test_reindent_splits_clauses():
    sql = "select a, b, c from t1 join t2 on t1.x = t2.y where a > 1 and b < 2 order by c"
    assert sqlparse.format(sql, reindent=True) == (
        "select a,\n       b,\n       c\nfrom t1\njoin t2 on t1.x = t2.y\n"
        "where a > 1\n  and b < 2\norder by c"
    )


def test_reindent_update_with_keyword_case():
    sql = "update t set a = 1 where id = 7"
    assert sqlparse.format(sql, reindent=True, keyword_case="upper", indent_width=3) == (
        "UPDATE t\nSET a = 1\nWHERE id = 7"
    )


def test_no_reindent_keeps_layout():
    assert sqlparse.format("select   x   from   y where z = 1") == "select   x   from   y where z = 1"
    assert sqlparse.format("select distinct name from users", keyword_case="upper") == (
        "SELECT DISTINCT name FROM users"
    )
