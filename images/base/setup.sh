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

# The sandbox user: uid/gid 1000, home /tmp (a tmpfs at run time).
getent group 1000 >/dev/null || groupadd --gid 1000 sandbox
getent passwd 1000 >/dev/null || useradd --uid 1000 --gid 1000 --home-dir /tmp --no-create-home --shell /bin/sh sandbox

mkdir -p /workspace /opt/patchloop/harness
chown 1000:1000 /workspace

# No setuid/setgid binaries: nothing inside may regain privileges.
find / -xdev -type f \( -perm -4000 -o -perm -2000 \) -exec chmod ug-s {} +

rm -rf /root/.cache /var/cache/apt/archives/*.deb
