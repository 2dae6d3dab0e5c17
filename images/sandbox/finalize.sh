#!/bin/sh
# Runs as root, without network, in the source stage of a sandbox image:
# drops what the project's .gitignore ignores, installs the project editable, commits the
# one-commit baseline and keeps a read-only copy of it in /opt/patchloop/baseline.git.
set -eu
cd /workspace

# Harness-owned git: no system/global config, no hooks, no fsmonitor, fixed identity and dates.
export HOME=/nonexistent GIT_CONFIG_NOSYSTEM=1 GIT_CONFIG_GLOBAL=/dev/null
export GIT_AUTHOR_NAME=patchloop GIT_AUTHOR_EMAIL=patchloop@localhost \
    GIT_COMMITTER_NAME=patchloop GIT_COMMITTER_EMAIL=patchloop@localhost \
    GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z"
g() {
    git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgsign=false \
        -c safe.directory='*' -c init.defaultBranch=main "$@"
}

g init -q
rm -rf .git/hooks
mkdir .git/hooks
# Files the project itself ignores are stale artefacts of the checkout: drop them.
g clean -ffdXq

had_build=0
[ -e build ] && had_build=1
if [ -f pyproject.toml ] || [ -f setup.py ]; then
    # The project's build backend is the project's code: run it as the sandbox user, installing
    # into a prefix of its own that the venv picks up through a root-written .pth file.
    prefix=/opt/patchloop/editable
    mkdir -p "$prefix"
    chown 1000:1000 "$prefix"
    chown -R 1000:1000 .git
    if setpriv --reuid=1000 --regid=1000 --clear-groups --no-new-privs env HOME=/tmp PIP_NO_INDEX=1 \
        /opt/venv/bin/pip install --no-deps --no-build-isolation --use-pep517 --no-cache-dir \
        --progress-bar off --prefix "$prefix" -e . >/tmp/patchloop-install.log 2>&1; then
        echo "patchloop: editable install ok"
        site=$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        for dir in $(find "$prefix" -type d \( -name site-packages -o -name dist-packages \)); do
            echo "import site; site.addsitedir('$dir')" >>"$site/patchloop-editable.pth"
        done
    else
        tail -n 15 /tmp/patchloop-install.log
        echo "patchloop: WARNING: editable install failed; /workspace (and /workspace/src) put on sys.path instead"
        site=$(/opt/venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
        { echo /workspace; [ -d src ] && echo /workspace/src; true; } >"$site/patchloop-workspace.pth"
    fi
    chown -R 0:0 "$prefix"
    rm -f /tmp/patchloop-install.log
fi
# Install artefacts must not enter the baseline.
find . -path ./.git -prune -o \( -name '*.egg-info' -o -name __pycache__ \) -prune -exec rm -rf {} +
[ "$had_build" = 0 ] && rm -rf build

# Whatever remains is the baseline, including files the install generated that .gitignore names.
g add -A -f
g commit -q --no-verify --allow-empty -m "patchloop baseline"
printf '%s\n' '__pycache__/' '*.py[cod]' '.pytest_cache/' '*.egg-info/' >>.git/info/exclude

left=$(g status --porcelain --ignored)
if [ -n "$left" ]; then
    echo "$left"
    echo "patchloop: FAILED: the workspace is not clean after the baseline commit"
    exit 1
fi

chown -R 1000:1000 .git
find . ! -user 1000 -exec chown -h 1000:1000 {} +
rm -rf /opt/patchloop/baseline.git
cp -a .git /opt/patchloop/baseline.git
chown -R 0:0 /opt/patchloop/baseline.git
chmod -R a-w /opt/patchloop/baseline.git
rm -f /opt/patchloop/finalize.sh
echo "patchloop: baseline $(g rev-parse --short HEAD)"
