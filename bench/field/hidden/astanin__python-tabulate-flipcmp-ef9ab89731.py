"""Hidden check: the asciidoc format on a table of its own — header row, the columns line and
the closing delimiter — with and without headers"""

from tabulate import tabulate


def test_asciidoc_with_headers():
    out = tabulate([["x", 1], ["yy", 22]], headers=["name", "n"], tablefmt="asciidoc")
    lines = out.splitlines()
    assert lines[0].startswith('[cols="') and 'options="header"' in lines[0], out
    assert lines[1] == "|====", out
    assert lines[-1] == "|====", out
    assert "name" in lines[2] and lines[2].startswith("|"), out
    assert len(lines) == 6, out


def test_asciidoc_without_headers():
    out = tabulate([["x", 1], ["yy", 22]], tablefmt="asciidoc")
    lines = out.splitlines()
    assert lines[0].startswith('[cols="') and "header" not in lines[0], out
    assert lines[1] == "|====" and lines[-1] == "|====", out
    assert len(lines) == 5, out
