#!/bin/sh
# Turns a Debian-based image with Go into the patchloop Go base. Runs as root during the build,
# under with-ca.sh (the build-time CA for apt).
set -eu
export DEBIAN_FRONTEND=noninteractive

# go (Debian's golang-go on the offline path), git (the diff baseline) and python3 (the harness
# helpers run `python3 -I`, never project code).
need=""
command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || need="$need golang-go"
command -v git >/dev/null 2>&1 || need="$need git"
command -v python3 >/dev/null 2>&1 || need="$need python3"
if [ -n "$need" ]; then
    echo "patchloop: installing$need with apt"
    apt-get update -q || { echo "patchloop: FAILED: apt-get update"; exit 1; }
    apt-get install -y -q --no-install-recommends $need \
        || { echo "patchloop: FAILED: apt-get install$need"; exit 1; }
    rm -rf /var/lib/apt/lists/*
fi
PATH=/usr/local/go/bin:$PATH go version

getent group 1000 >/dev/null || groupadd --gid 1000 sandbox
getent passwd 1000 >/dev/null || useradd --uid 1000 --gid 1000 --home-dir /tmp --no-create-home --shell /bin/sh sandbox
mkdir -p /workspace /opt/patchloop/harness /opt/patchloop/gomod
chown 1000:1000 /workspace
echo go >/opt/patchloop/kind

find / -xdev -type f \( -perm -4000 -o -perm -2000 \) -exec chmod ug-s {} +
rm -rf /root/.cache /var/cache/apt/archives/*.deb
