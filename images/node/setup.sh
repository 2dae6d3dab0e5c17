#!/bin/sh
# Turns a Debian-based image with nodejs/npm into the patchloop Node base. Runs as root during
# the build, under with-ca.sh (the build-time CA for apt; npm gets it below).
set -eu
export DEBIAN_FRONTEND=noninteractive

# nodejs/npm (Debian's on the offline path), git and python3 (the harness helpers).
need=""
command -v node >/dev/null 2>&1 || need="$need nodejs"
command -v npm >/dev/null 2>&1 || need="$need npm"
command -v git >/dev/null 2>&1 || need="$need git"
command -v python3 >/dev/null 2>&1 || need="$need python3"
if [ -n "$need" ]; then
    echo "patchloop: installing$need with apt"
    apt-get update -q || { echo "patchloop: FAILED: apt-get update"; exit 1; }
    apt-get install -y -q --no-install-recommends $need \
        || { echo "patchloop: FAILED: apt-get install$need"; exit 1; }
    rm -rf /var/lib/apt/lists/*
fi
node --version
npm --version

# The build-time CA (with-ca.sh sets SSL_CERT_FILE to a bundle when one was given) for npm.
if [ -n "${SSL_CERT_FILE:-}" ]; then
    export NODE_EXTRA_CA_CERTS="$SSL_CERT_FILE" npm_config_cafile="$SSL_CERT_FILE"
fi
# The JUnit reporter is harness-owned: the same one for every project, outside the workspace.
mkdir -p /opt/patchloop/node-harness
echo '{"name": "patchloop-node-harness", "private": true}' >/opt/patchloop/node-harness/package.json
echo "patchloop: running: npm install jest-junit@16.0.0"
npm install --prefix /opt/patchloop/node-harness --no-audit --no-fund --no-update-notifier \
    --cache /tmp/patchloop-npm-cache jest-junit@16.0.0 \
    || { echo "patchloop: FAILED: npm install jest-junit@16.0.0"; exit 1; }
rm -rf /tmp/patchloop-npm-cache

getent group 1000 >/dev/null || groupadd --gid 1000 sandbox
getent passwd 1000 >/dev/null || useradd --uid 1000 --gid 1000 --home-dir /tmp --no-create-home --shell /bin/sh sandbox
mkdir -p /workspace /opt/patchloop/harness
chown 1000:1000 /workspace
echo node >/opt/patchloop/kind

find / -xdev -type f \( -perm -4000 -o -perm -2000 \) -exec chmod ug-s {} +
rm -rf /root/.cache /root/.npm /var/cache/apt/archives/*.deb
