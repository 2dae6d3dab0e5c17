#!/bin/sh
# Dependencies layer of a Rust project (root, with network, under with-ca.sh): vendors every
# crate the manifests and Cargo.lock name into /opt/patchloop/vendor and points cargo at it in
# /.cargo/config.toml (an ancestor of /workspace, read-only at run time), offline from then on.
set -eu
cd "$1"
if [ -n "${SSL_CERT_FILE:-}" ]; then
    export CARGO_HTTP_CAINFO="$SSL_CERT_FILE"
fi
export CARGO_HOME=/tmp/patchloop-cargo-home CARGO_NET_OFFLINE=false
# Only the manifests are here: give each package a stub target so cargo can load the workspace.
find . -name Cargo.toml | while read -r manifest; do
    d=$(dirname "$manifest")
    if [ ! -e "$d/src/lib.rs" ] && [ ! -e "$d/src/main.rs" ]; then
        mkdir -p "$d/src" && : >"$d/src/lib.rs"
    fi
done
mkdir -p /opt/patchloop/vendor /.cargo
# The sparse index (HTTPS to index.crates.io) instead of the git index on github.com: registries
# may be reachable where GitHub is not. Default from cargo 1.70; before 1.68 (Debian bookworm's
# cargo is 1.65) it is the unstable -Z sparse-registry, allowed on stable with RUSTC_BOOTSTRAP=1.
export CARGO_REGISTRIES_CRATES_IO_PROTOCOL=sparse
minor=$(cargo --version | sed -n 's/^cargo 1\.\([0-9]*\).*/\1/p')
zflags=""
if [ "${minor:-99}" -lt 68 ]; then
    zflags="-Z sparse-registry"
    export RUSTC_BOOTSTRAP=1
fi
echo "patchloop: running: cargo $zflags vendor --versioned-dirs /opt/patchloop/vendor"
if ! cargo $zflags vendor --versioned-dirs /opt/patchloop/vendor >/tmp/patchloop-vendor.toml; then
    echo "patchloop: FAILED: cargo vendor (fetching the crates Cargo.toml/Cargo.lock name)"
    exit 1
fi
{
    echo "# written by patchloop: dependencies are vendored at image build time"
    cat /tmp/patchloop-vendor.toml
    printf '\n[net]\noffline = true\n'
} >/.cargo/config.toml
chmod -R a+rX /opt/patchloop/vendor /.cargo
rm -rf /tmp/patchloop-vendor.toml "$CARGO_HOME"
echo "patchloop: vendored $(ls /opt/patchloop/vendor | wc -l) crates"
