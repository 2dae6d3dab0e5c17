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
echo "patchloop: running: cargo vendor --versioned-dirs /opt/patchloop/vendor"
if ! cargo vendor --versioned-dirs /opt/patchloop/vendor >/tmp/patchloop-vendor.toml; then
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
