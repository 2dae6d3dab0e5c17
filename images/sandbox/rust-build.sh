#!/bin/sh
# Source stage of a Rust project (root, no network), after finalize.sh: keeps target/ (and a
# Cargo.lock cargo may create) out of the diff baseline, then compiles the crate and its tests as
# uid 1000 so `cargo test` in the network-less sandbox starts warm. A crate that does not build
# yet is not an error here: a broken build is something to repair.
set -eu
cd /workspace
ignore='/target/'
[ -f Cargo.lock ] || ignore="$ignore
/Cargo.lock"
for ex in /workspace/.git/info/exclude /opt/patchloop/baseline.git/info/exclude; do
    printf '%s\n' "$ignore" >>"$ex"
done
echo "patchloop: running: cargo test --no-run (as uid 1000)"
if setpriv --reuid 1000 --regid 1000 --clear-groups env HOME=/tmp CARGO_HOME=/tmp/.cargo \
    cargo test --no-run --offline --message-format=short >/tmp/patchloop-build.log 2>&1; then
    tail -n 3 /tmp/patchloop-build.log
else
    tail -n 40 /tmp/patchloop-build.log
    echo "patchloop: warning: the crate or its tests do not compile yet (tests will fail to build)"
fi
rm -rf /tmp/patchloop-build.log /tmp/.cargo /opt/patchloop/rust-build.sh
# The compiled target/ belongs in the copy the tmpfs workspace is filled from.
rm -rf /opt/patchloop/workspace
cp -al /workspace /opt/patchloop/workspace
