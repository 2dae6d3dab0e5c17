#!/bin/sh
# Dependencies layer of a Go project (root, with network, under with-ca.sh): downloads every
# module go.mod/go.sum name into the module cache /opt/patchloop/gomod (GOMODCACHE of the base),
# read-only at run time, where GOPROXY=off keeps the tests offline. A vendor/ directory in the
# checkout needs nothing here.
set -eu
cd "$1"
if [ ! -f go.mod ]; then
    echo "patchloop: no go.mod; no modules to download"
    exit 0
fi
export GOPROXY=https://proxy.golang.org,direct GOSUMDB=sum.golang.org GOFLAGS=-mod=mod \
    GOCACHE=/tmp/patchloop-gocache GOPATH=/tmp/patchloop-gopath GOTMPDIR=/tmp
echo "patchloop: running: go mod download"
if ! go mod download; then
    echo "patchloop: FAILED: go mod download (fetching the modules go.mod names)"
    exit 1
fi
chmod -R a+rX /opt/patchloop/gomod
rm -rf /tmp/patchloop-gocache /tmp/patchloop-gopath
echo "patchloop: $(find /opt/patchloop/gomod/cache/download -name '*.zip' 2>/dev/null | wc -l) modules in the cache"
