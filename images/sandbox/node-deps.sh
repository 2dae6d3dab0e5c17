#!/bin/sh
# Dependencies layer of a Node project (root, with network, under with-ca.sh): installs
# package.json's dependencies with npm into /opt/patchloop/node/node_modules, linked as
# /node_modules (an ancestor of /workspace: Node and jest resolve it from the project, and it is
# read-only at run time, outside the workspace and the diff).
set -eu
if [ -n "${SSL_CERT_FILE:-}" ]; then
    export NODE_EXTRA_CA_CERTS="$SSL_CERT_FILE" npm_config_cafile="$SSL_CERT_FILE"
fi
export npm_config_offline=false npm_config_cache=/tmp/patchloop-npm-cache
mkdir -p /opt/patchloop/node
cp "$1"/package.json /opt/patchloop/node/ 2>/dev/null || echo '{}' >/opt/patchloop/node/package.json
for lock in package-lock.json npm-shrinkwrap.json; do
    if [ -f "$1/$lock" ]; then cp "$1/$lock" /opt/patchloop/node/; fi
done
cd /opt/patchloop/node
if [ -f package-lock.json ] || [ -f npm-shrinkwrap.json ]; then
    cmd="npm ci --no-audit --no-fund"
else
    cmd="npm install --no-audit --no-fund"
fi
echo "patchloop: running: $cmd"
if ! $cmd; then
    echo "patchloop: FAILED: $cmd"
    exit 1
fi
mkdir -p node_modules
ln -sfn /opt/patchloop/node/node_modules /node_modules
rm -rf "$npm_config_cache"
echo "patchloop: installed $(ls node_modules | wc -l) top-level packages"
