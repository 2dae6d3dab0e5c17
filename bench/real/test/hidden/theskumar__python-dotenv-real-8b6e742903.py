"""Hidden check: `dotenv get` prints empty values instead of failing"""

from click.testing import CliRunner

from dotenv.cli import cli


def _get(tmp_path, content, key):
    path = tmp_path / "settings.env"
    path.write_text(content)
    return CliRunner().invoke(cli, ["--file", str(path), "get", key])


def test_unquoted_empty_value_among_others(tmp_path):
    result = _get(tmp_path, "A=1\nEMPTY=\nB=2\n", "EMPTY")
    assert (result.exit_code, result.output) == (0, "\n")


def test_quoted_and_exported_empty_values(tmp_path):
    for content in ("Q=''\n", 'Q=""\n', "export Q=\n"):
        result = _get(tmp_path, content, "Q")
        assert (result.exit_code, result.output) == (0, "\n"), content


def test_empty_value_succeeds_where_missing_and_bare_keys_fail(tmp_path):
    assert _get(tmp_path, "A=1\n", "Z").exit_code == 1
    assert _get(tmp_path, "BARE\nV=\n", "BARE").exit_code == 1
    result = _get(tmp_path, "BARE\nV=\n", "V")
    assert (result.exit_code, result.output) == (0, "\n")
