#!/bin/sh
# Runs as root, without network, in the install layer. The project's build backend is the
# project's code: it runs as the sandbox user and installs into a prefix of its own that the venv
# picks up through a root-written .pth file. Files the install generates in the tree (e.g. a
# setuptools_scm _version.py) are kept in /opt/patchloop/generated for the source layer; then
# /workspace is emptied (the source layer copies the current checkout).
set -eu
cd /workspace
prefix=/opt/patchloop/editable
generated=/opt/patchloop/generated
site=$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
mkdir -p "$prefix" "$generated"
chown 1000:1000 "$prefix"
find . \( -type f -o -type l \) -print | sort >/tmp/patchloop-before
touch /tmp/patchloop-stamp

# A test dependency may have brought the project's own release from the registry into the venv
# (Twisted needs Automat, pytest needs pluggy, jaraco.context needs backports.tarfile). It would
# come first on sys.path and shadow the checkout, and pip (as the sandbox user) cannot replace
# it, where CI's install of the project does: remove it first, as root. The names: the sdist's
# PKG-INFO, pyproject's [project], setup.cfg's [metadata]; after the install, what it installed.
own_names() {
    [ -f PKG-INFO ] && sed -n 's/^Name: *//p' PKG-INFO | head -1
    /opt/venv/bin/python -I - <<'PY' 2>/dev/null || true
import configparser, tomllib
try:
    print(tomllib.load(open("pyproject.toml", "rb")).get("project", {}).get("name", ""))
except Exception:
    pass
cp = configparser.ConfigParser(interpolation=None)
try:
    cp.read("setup.cfg")
    print(cp.get("metadata", "name", fallback=""))
except Exception:
    pass
PY
    find "$prefix" -path '*.dist-info/METADATA' -exec sed -n 's/^Name: *//p' {} \;
}
remove_registry_copy() {
    for name in $(own_names | sort -u); do
        case "$name" in *[!A-Za-z0-9._-]*) continue ;; esac
        if /opt/venv/bin/pip show -q "$name" >/dev/null 2>&1; then
            version=$(/opt/venv/bin/pip show "$name" 2>/dev/null | sed -n 's/^Version: *//p')
            /opt/venv/bin/pip uninstall -y -q "$name" >/dev/null 2>&1 &&
                echo "removed $name $version from the environment (a dependency installed it; the checkout is the project)" | tee -a /opt/patchloop/install-notes
        fi
    done
}
remove_registry_copy

backend=/opt/patchloop/build-backend
# The project's build backend as CI's build isolation has it (deps.py installed the newest its
# `[build-system] requires` allows there), else the environment's own.
editable() {
    setpriv --reuid=1000 --regid=1000 --clear-groups --no-new-privs env HOME=/tmp PIP_NO_INDEX=1 "$@" \
        /opt/venv/bin/pip install --no-deps --no-build-isolation --use-pep517 --no-cache-dir \
        --no-compile --progress-bar off --prefix "$prefix" -e . >>/tmp/patchloop-install.log 2>&1
}
installed=""
if [ -d "$backend" ] && editable PYTHONPATH="$backend"; then
    installed="with the build backend its [build-system] requires (as CI's isolated build)"
elif editable; then
    installed="with the environment's build backend"
fi
if [ -n "$installed" ]; then
    echo "patchloop: editable install ok ($installed)"
    remove_registry_copy
    for dir in $(find "$prefix" -type d \( -name site-packages -o -name dist-packages \)); do
        echo "import site; site.addsitedir('$dir')" >>"$site/patchloop-editable.pth"
    done
else
    tail -n 15 /tmp/patchloop-install.log
    echo "patchloop: WARNING: editable install failed; /workspace (and /workspace/src) put on sys.path instead"
    { echo /workspace; [ -d src ] && echo /workspace/src; true; } >"$site/patchloop-workspace.pth"
    echo "editable install failed; the checkout (and src/) put on sys.path instead" >/opt/patchloop/install-fallback
fi

# Packaging artefacts are not worth keeping; anything else new is.
find . \( -name '*.egg-info' -o -name __pycache__ -o -name .eggs \) -prune -exec rm -rf {} +
find . \( -type f -o -type l \) -print | sort >/tmp/patchloop-after
# New files, and files the build wrote again: a setuptools_scm `write_to` file an sdist ships
# but the project's .gitignore names (isodate's version.py) is dropped with the ignored files
# by finalize.sh, and CI's build would write it. The checkout's own files still win there.
{ comm -13 /tmp/patchloop-before /tmp/patchloop-after
  find . -type f -newer /tmp/patchloop-stamp -print
} | sort -u | grep -v '^\./build/' | while IFS= read -r f; do
    mkdir -p "$generated/$(dirname "$f")"
    cp -a "$f" "$generated/$f"
    echo "patchloop: kept generated file $f"
done

chown -R 0:0 "$prefix" "$generated"
find /workspace -mindepth 1 -delete
rm -rf "$backend"
rm -f /opt/patchloop/install.sh /tmp/patchloop-before /tmp/patchloop-after /tmp/patchloop-stamp /tmp/patchloop-install.log
