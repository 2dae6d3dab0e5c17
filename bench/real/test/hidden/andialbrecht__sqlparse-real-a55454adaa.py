"""Hidden check: sqlformat leaves its destination alone when formatting fails"""

import sqlparse.cli

DEEP_SQL = 'select ' + '(' * 300 + '1' + ')' * 300 + ' from t'


def test_outfile_untouched_on_nesting_error(tmp_path, capsys):
    src = tmp_path / 'deep.sql'
    src.write_text(DEEP_SQL)
    out = tmp_path / 'result.sql'
    out.write_text('-- previous output\n')
    assert sqlparse.cli.main([str(src), '--outfile', str(out), '-r']) == 1
    assert out.read_text() == '-- previous output\n'
    err = capsys.readouterr().err
    assert err.startswith('[ERROR] Failed to format ' + str(src))


def test_in_place_untouched_on_nesting_error(tmp_path, capsys):
    src = tmp_path / 'deep.sql'
    src.write_text(DEEP_SQL)
    assert sqlparse.cli.main([str(src), '--in-place', '--strip-comments']) == 1
    assert src.read_text() == DEEP_SQL
    assert '[ERROR] Failed to format' in capsys.readouterr().err


def test_in_place_still_writes_when_formatting_works(tmp_path, capsys):
    good = tmp_path / 'good.sql'
    good.write_text('select a from b')
    assert sqlparse.cli.main([str(good), '--in-place', '-k', 'upper']) == 0
    assert good.read_text() == 'SELECT a FROM b'
    bad = tmp_path / 'bad.sql'
    bad.write_text(DEEP_SQL)
    assert sqlparse.cli.main([str(bad), '--in-place', '-r']) == 1
    assert bad.read_text() == DEEP_SQL
