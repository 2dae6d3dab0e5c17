"""Hidden check: `dotenv run --no-override` interpolates with the environment's values"""

import os
import subprocess
import sys


def _run(tmp_path, option, env_updates, script):
    env = dict(os.environ)
    for k in ("H3_HOST", "H3_URL", "H3_PORT", "H3_ADDR"):
        env.pop(k, None)
    env.update(env_updates)
    return subprocess.run(
        [sys.executable, "-m", "dotenv", "run", option, sys.executable, "-c", script],
        cwd=tmp_path, env=env, capture_output=True, text=True,
    )


def test_existing_variable_used_in_references(tmp_path):
    (tmp_path / ".env").write_text("H3_HOST=file-host\nH3_URL=http://${H3_HOST}:80/\n")
    script = "import os; print(os.environ['H3_URL'])"
    result = _run(tmp_path, "--no-override", {"H3_HOST": "env-host"}, script)
    assert (result.returncode, result.stdout) == (0, "http://env-host:80/\n"), result.stderr
    result = _run(tmp_path, "--override", {"H3_HOST": "env-host"}, script)
    assert (result.returncode, result.stdout) == (0, "http://file-host:80/\n"), result.stderr


def test_several_references_and_defaults(tmp_path):
    (tmp_path / ".env").write_text(
        "H3_HOST=h\nH3_PORT=1\nH3_ADDR=${H3_HOST}:${H3_PORT:-9}\n"
    )
    script = "import os; print(os.environ['H3_ADDR'], os.environ['H3_PORT'])"
    result = _run(tmp_path, "--no-override", {"H3_PORT": "8443"}, script)
    assert (result.returncode, result.stdout) == (0, "h:8443 8443\n"), result.stderr
