#!/bin/sh
# Turns a Debian-based image with cargo/rustc into the patchloop Rust base. Runs as root during
# the build, under with-ca.sh (the build-time CA for apt).
set -eu
export DEBIAN_FRONTEND=noninteractive
here=$(dirname "$0")

# cargo/rustc (Debian's on the offline path), git (the diff baseline) and python3 (the harness
# helpers run `python3 -I`, never project code).
need=""
command -v cargo >/dev/null 2>&1 || [ -x /usr/local/cargo/bin/cargo ] || need="$need cargo rustc"
command -v git >/dev/null 2>&1 || need="$need git"
command -v python3 >/dev/null 2>&1 || need="$need python3"
if [ -n "$need" ]; then
    echo "patchloop: installing$need with apt"
    apt-get update -q || { echo "patchloop: FAILED: apt-get update"; exit 1; }
    apt-get install -y -q --no-install-recommends $need \
        || { echo "patchloop: FAILED: apt-get install$need"; exit 1; }
    rm -rf /var/lib/apt/lists/*
fi
# rustup images keep cargo in /usr/local/cargo/bin; the sandbox PATH is fixed.
if [ -d /usr/local/cargo/bin ]; then
    for b in /usr/local/cargo/bin/*; do ln -sf "$b" "/usr/local/bin/$(basename "$b")"; done
fi
cargo --version
rustc --version

# cargo-nextest (JUnit per test process) when the builder found one; else libtest's own JUnit.
if [ -s "$here/cargo-nextest" ]; then
    install -m 0755 "$here/cargo-nextest" /usr/local/bin/cargo-nextest
    echo "patchloop: $(cargo-nextest --version | head -n 1) installed"
else
    echo "patchloop: no cargo-nextest; tests report through libtest's JUnit format"
fi

getent group 1000 >/dev/null || groupadd --gid 1000 sandbox
getent passwd 1000 >/dev/null || useradd --uid 1000 --gid 1000 --home-dir /tmp --no-create-home --shell /bin/sh sandbox
mkdir -p /workspace /opt/patchloop/harness
chown 1000:1000 /workspace
echo rust >/opt/patchloop/kind

find / -xdev -type f \( -perm -4000 -o -perm -2000 \) -exec chmod ug-s {} +
rm -rf /root/.cache /var/cache/apt/archives/*.deb
