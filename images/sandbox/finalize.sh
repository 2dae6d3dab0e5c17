#!/bin/sh
# Runs as root, without network, in the source stage of a sandbox image: drops what the
# project's .gitignore ignores, restores files the install layer generated, commits the
# one-commit baseline and keeps a read-only copy of it in /opt/patchloop/baseline.git, and a
# copy of the workspace in /opt/patchloop/workspace.
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

# Files the install layer generated (kept only where the checkout has none of its own).
if [ -d /opt/patchloop/generated ]; then
    cp -an /opt/patchloop/generated/. /workspace/
fi

# Whatever remains is the baseline, including files the install generated that .gitignore names.
g add -A -f
g commit -q --no-verify --allow-empty -m "patchloop baseline"
# What test runs leave behind (bytecode, caches, coverage data, tox/nox envs) is never a
# patch; an sdist ships no .gitignore to say so.
printf '%s\n' '__pycache__/' '*.py[cod]' '.pytest_cache/' '*.egg-info/' '.coverage' '.coverage.*' \
    'coverage.xml' 'htmlcov/' '.hypothesis/' '.mypy_cache/' '.tox/' '.nox/' >>.git/info/exclude

left=$(g status --porcelain --ignored)
if [ -n "$left" ]; then
    echo "$left"
    echo "patchloop: FAILED: the workspace is not clean after the baseline commit"
    exit 1
fi

chown -R 1000:1000 .git
find . ! -user 1000 -exec chown -h 1000:1000 {} +
# World-readable: the verifier's read-only helper runs as another uid (SECURITY: it must not
# share a uid with the code under test). Only the x bit of files is tracked by git.
chmod -R a+rX .
rm -rf /opt/patchloop/baseline.git
cp -a .git /opt/patchloop/baseline.git
chown -R 0:0 /opt/patchloop/baseline.git
chmod -R a-w /opt/patchloop/baseline.git
# The copy a quota'd tmpfs workspace is filled from at container start (hardlinks: no extra
# space; the root filesystem is read-only in the sandbox). rust-build.sh refreshes it.
rm -rf /opt/patchloop/workspace
cp -al /workspace /opt/patchloop/workspace
rm -f /opt/patchloop/finalize.sh
echo "patchloop: baseline $(g rev-parse --short HEAD)"
# The install layer's fallback, when it needed one (prepare puts it in the image's note).
if [ -f /opt/patchloop/install-fallback ]; then
    echo "patchloop: install fallback: $(cat /opt/patchloop/install-fallback)"
fi
# What the install layer changed in the environment, and why.
if [ -f /opt/patchloop/install-notes ]; then
    sed 's/^/patchloop: install: /' /opt/patchloop/install-notes
fi
# What the dependencies layer installed and left out (prepare labels the image with it).
if [ -f /opt/patchloop/deps.json ]; then
    # printf, not echo: dash's echo would unescape the JSON's backslashes.
    printf 'patchloop: deps.json %s\n' "$(tr -d '\n' </opt/patchloop/deps.json)"
fi
