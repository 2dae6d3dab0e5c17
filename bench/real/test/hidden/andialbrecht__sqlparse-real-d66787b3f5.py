"""Hidden check: the php output format escapes dollar signs in the SQL text"""

import sqlparse


def php(sql):
    return sqlparse.format(sql, output_format='php')


def test_dollar_in_quoted_identifier_and_string():
    assert php('select "$x" from t') == '$sql = "select \\"\\$x\\" from t";'
    assert php("update t set a = '${b}'") == '$sql = "update t set a = \'\\${b}\'";'


def test_dollar_in_multiline_statement():
    sql = "select a\nfrom t\nwhere b = '$v'"
    assert php(sql) == '\n'.join([
        '$sql  = "select a ";',
        '$sql .= "from t ";',
        '$sql .= "where b = \'\\$v\'";',
    ])


def test_each_dollar_escaped_once_and_python_untouched():
    assert php("select '$$'") == '$sql = "select \'\\$\\$\'";'
    assert php("select 1; select '$a'") == '$sql = "select 1; ";\n$sql2 = "select \'\\$a\'";'
    py = sqlparse.format("select '$a'", output_format='python')
    assert py == "sql = 'select \\'$a\\''"
