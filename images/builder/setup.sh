#!/bin/sh
# Adds a C/C++ toolchain to a Python base (Debian's apt: the offline base's bookworm mirror, or
# python:X.Y-slim's own Debian). The -dev packages are only those whose runtime library the base
# already has (libffi, OpenSSL, zlib), so what builds against them also imports in the sandbox.
# Debian's interpreter needs python3-dev for Python.h; python:X.Y-slim ships its headers.
set -eu
export DEBIAN_FRONTEND=noninteractive
pkgs="build-essential pkg-config libffi-dev libssl-dev zlib1g-dev"
include=$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
if [ ! -f "$include/Python.h" ]; then
    pkgs="$pkgs python3-dev"
fi
echo "patchloop: apt-get install $pkgs"
apt-get update -q
apt-get install -y -q --no-install-recommends $pkgs
rm -rf /var/lib/apt/lists/* /var/cache/apt/archives/*.deb
test -f "$include/Python.h" || { echo "patchloop: FAILED: no Python.h in $include"; exit 1; }
gcc --version | head -n 1
