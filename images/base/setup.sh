#!/bin/sh
# Turns a Debian-based Python image into the patchloop base. Runs as root during the build,
# under with-ca.sh so pip and apt trust the build-time CA.
set -eu
export DEBIAN_FRONTEND=noninteractive

if ! command -v git >/dev/null 2>&1; then
    echo "patchloop: installing git with apt"
    apt-get update -q
    apt-get install -y -q --no-install-recommends git
    rm -rf /var/lib/apt/lists/*
fi

# The venv sees the system site-packages (Debian's pytest on the offline path).
python3 -m venv --system-site-packages /opt/venv
need=""
/opt/venv/bin/python -c 'import pytest' 2>/dev/null || need="$need pytest"
# Editable installs run without network and without build isolation: the backend must be here.
/opt/venv/bin/python -c 'import setuptools' 2>/dev/null || need="$need setuptools"
/opt/venv/bin/python -c 'import wheel' 2>/dev/null || need="$need wheel"
if [ -n "$need" ]; then
    echo "patchloop: pip install$need"
    /opt/venv/bin/pip install --no-cache-dir $need
fi
/opt/venv/bin/python -m pytest --version

# The harness's own pytest: a copy of the one just checked (and of what it imports) in a site
# directory of its own, on no sys.path by default. A project's dependency install writes only
# to the venv, so its pins (pytest==3.0.7) can never replace it; pl_run.py falls back to it
# when the project's pytest does not import or is too old for the harness.
/opt/venv/bin/python - /opt/patchloop/harness-site <<'PY'
import importlib.metadata as md, importlib.util, os, re, shutil, sys
site = sys.argv[1]
os.makedirs(site)
def top_levels(dist):
    names = set((dist.read_text("top_level.txt") or "").split())
    for f in dist.files or []:
        first = f.parts[0]
        if first.endswith((".dist-info", ".egg-info")) or first in ("..", "__pycache__") or len(f.parts) > 1 and first.endswith(".data"):
            continue
        names.add(first[:-3] if first.endswith(".py") else first)
    return {n for n in names if n and not n.endswith(".pth")}
todo, done = ["pytest"], set()
while todo:
    name = re.sub(r"[-_.]+", "-", todo.pop()).lower()
    if name in done:
        continue
    done.add(name)
    try:
        dist = md.distribution(name)
    except md.PackageNotFoundError:
        continue
    for req in dist.requires or []:
        # Markers are not evaluated: a requirement not installed here is skipped below.
        if "extra ==" in req:
            continue
        todo.append(re.split(r"[\s\[<>=!~;(]", req, 1)[0])
    for top in top_levels(dist):
        spec = importlib.util.find_spec(top)
        if spec is None or spec.origin in (None, "built-in", "frozen"):
            continue
        src = os.path.dirname(spec.origin) if spec.submodule_search_locations else spec.origin
        dst = os.path.join(site, os.path.basename(src))
        if os.path.exists(dst):
            continue
        (shutil.copytree if os.path.isdir(src) else shutil.copy2)(src, dst)
    meta = getattr(dist, "_path", None)
    if meta is not None and os.path.isdir(meta):
        shutil.copytree(meta, os.path.join(site, os.path.basename(meta)))
    print("patchloop: harness site: %s %s" % (dist.metadata["Name"], dist.version))
PY
find /opt/patchloop/harness-site -name __pycache__ -prune -exec rm -rf {} +
chmod -R a+rX,go-w /opt/patchloop/harness-site
/opt/venv/bin/python -I -c 'import sys; sys.path.insert(0, "/opt/patchloop/harness-site"); import pytest, _pytest.junitxml; assert pytest.__file__.startswith("/opt/patchloop/harness-site/"), pytest.__file__; print("patchloop: harness pytest", pytest.__version__)'

# Hypothesis for the verifier's differential layer (pl_differ.py, src/verify/differential.rs),
# in a site of its own like the harness's pytest: on no sys.path by default, so a project's
# pins never meet it; a project whose tests loaded their own Hypothesis is tested with that.
/opt/venv/bin/pip install --no-cache-dir --target /opt/patchloop/hypothesis-site 'hypothesis>=6.100,<7'
find /opt/patchloop/hypothesis-site -name __pycache__ -prune -exec rm -rf {} +
chmod -R a+rX,go-w /opt/patchloop/hypothesis-site
/opt/venv/bin/python -I -B -c 'import sys; sys.path.insert(0, "/opt/patchloop/hypothesis-site"); import hypothesis; print("patchloop: hypothesis", hypothesis.__version__)'

# The sandbox user: uid/gid 1000, home /tmp (a tmpfs at run time).
getent group 1000 >/dev/null || groupadd --gid 1000 sandbox
getent passwd 1000 >/dev/null || useradd --uid 1000 --gid 1000 --home-dir /tmp --no-create-home --shell /bin/sh sandbox

mkdir -p /workspace /opt/patchloop/harness
chown 1000:1000 /workspace

# No setuid/setgid binaries: nothing inside may regain privileges.
find / -xdev -type f \( -perm -4000 -o -perm -2000 \) -exec chmod ug-s {} +

rm -rf /root/.cache /var/cache/apt/archives/*.deb
