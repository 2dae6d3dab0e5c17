"""Hidden check: the lint CLI's main() parses the argv it is given, not sys.argv"""

import sys

from dependency_groups._lint_dependency_groups import main


def _run(capsys, argv):
    try:
        main(argv=argv)
        code = 0
    except SystemExit as e:
        code = e.code
    out = capsys.readouterr()
    return code, out.out, out.err


def test_explicit_argv_wins_over_sys_argv(tmp_path, monkeypatch, capsys):
    path = tmp_path / "deps.toml"
    path.write_text(
        '[dependency-groups]\ntest = ["pytest>=8", {include-group = "lint"}]\nlint = ["ruff"]\n'
    )
    monkeypatch.setattr(sys, "argv", ["lint-dependency-groups", "--bogus"])
    assert _run(capsys, ["--pyproject-file", str(path)]) == (0, "ok\n", "")


def test_explicit_argv_reports_cycles(tmp_path, monkeypatch, capsys):
    path = tmp_path / "cycle.toml"
    path.write_text(
        '[dependency-groups]\nalpha = [{include-group = "beta"}]\n'
        'beta = [{include-group = "alpha"}]\n'
    )
    monkeypatch.setattr(sys, "argv", ["lint-dependency-groups", "-f", str(tmp_path / "missing.toml")])
    code, out, err = _run(capsys, ["--pyproject-file", str(path)])
    assert code == 1
    assert out == (
        "errors encountered while examining dependency groups:\n"
        "  CyclicDependencyError: Cyclic dependency group include while resolving alpha:"
        " alpha -> beta, beta -> alpha\n"
        "  CyclicDependencyError: Cyclic dependency group include while resolving beta:"
        " alpha -> beta, beta -> alpha\n"
    )
    assert err == ""


def test_without_argv_reads_sys_argv(tmp_path, monkeypatch, capsys):
    path = tmp_path / "pyproject.toml"
    path.write_text('[dependency-groups]\nlint = ["ruff"]\n')
    monkeypatch.setattr(sys, "argv", ["lint-dependency-groups", "-f", str(path)])
    assert _run(capsys, None) == (0, "ok\n", "")
