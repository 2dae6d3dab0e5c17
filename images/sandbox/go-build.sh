#!/bin/sh
# Source stage of a Go project (root, no network), after finalize.sh. `go test` builds its test
# binaries in GOTMPDIR and runs them from there; the sandbox's /tmp is noexec, so the Go base
# points GOTMPDIR at /workspace/.gotmp (an executable, quota'd tmpfs at run time), kept out of
# the diff baseline like cargo's target/.
set -eu
cd /workspace
for ex in /workspace/.git/info/exclude /opt/patchloop/baseline.git/info/exclude; do
    printf '%s\n' '/.gotmp/' >>"$ex"
done
mkdir -p /workspace/.gotmp
chown 1000:1000 /workspace/.gotmp
rm -f /opt/patchloop/go-build.sh
rm -rf /opt/patchloop/workspace
cp -al /workspace /opt/patchloop/workspace
