"""Hidden check: `dotenv run` of a missing command reports it without a traceback"""

import subprocess
import sys


def _run(tmp_path, *args):
    (tmp_path / ".env").write_text("H3_X=1\n")
    return subprocess.run(
        [sys.executable, "-m", "dotenv", "--file", str(tmp_path / ".env"), "run", *args],
        cwd=tmp_path, capture_output=True, text=True,
    )


def test_missing_command_message(tmp_path):
    result = _run(tmp_path, "h3-no-such-command-xyz", "--flag")
    assert result.returncode == 1
    assert "Command not found: h3-no-such-command-xyz" in result.stderr
    assert "Traceback" not in result.stderr


def test_missing_command_with_no_override(tmp_path):
    result = _run(tmp_path, "--no-override", "./relative-missing-tool")
    assert result.returncode == 1
    assert "Command not found: ./relative-missing-tool" in result.stderr
