"""Hidden check: `dotenv run` on POSIX replaces its own process with the command (exec), passing the .env values"""

import os
import subprocess
import sys


def _run(args, cwd, env=None):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        cwd=str(cwd),
        env=full_env,
        timeout=60,
    )


def test_cli_run_passes_values_and_exit_code(tmp_path):
    (tmp_path / ".env").write_text("HIDDEN_GREETING='hello world'\nHIDDEN_CODE=7\n")
    code = (
        "import os, sys; print(os.environ['HIDDEN_GREETING']);"
        " sys.exit(int(os.environ['HIDDEN_CODE']))"
    )
    result = _run(["-m", "dotenv", "run", sys.executable, "-c", code], tmp_path)
    assert result.stdout == "hello world\n", result.stderr
    assert result.returncode == 7


def test_run_command_keeps_the_same_process(tmp_path):
    script = (
        "import os, sys\n"
        "from dotenv.cli import run_command\n"
        "print(os.getpid(), flush=True)\n"
        "run_command([sys.executable, '-c',"
        " 'import os; print(os.getpid(), os.environ[\"HIDDEN_K\"])'],"
        " {'HIDDEN_K': 'v1'})\n"
        "print('not reached', flush=True)\n"
    )
    result = _run(["-c", script], tmp_path)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split()
    assert len(lines) == 3, result.stdout + result.stderr
    assert lines[0] == lines[1]
    assert lines[2] == "v1"


def test_cli_run_no_override_keeps_environment(tmp_path):
    (tmp_path / "custom.env").write_text("HIDDEN_X=from_file\nHIDDEN_Y=file_y\n")
    code = "import os; print(os.environ['HIDDEN_X'], os.environ['HIDDEN_Y'])"
    result = _run(
        ["-m", "dotenv", "-f", "custom.env", "run", "--no-override",
         sys.executable, "-c", code],
        tmp_path,
        env={"HIDDEN_X": "from_env"},
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "from_env file_y\n"
