#!/bin/sh
# Runs a build command trusting the build-time CA (patchloop --ca-cert, e.g. a TLS-intercepting
# corporate proxy) in addition to the image's own store. ca.crt next to this script may be empty.
set -eu
here=$(dirname "$0")
if [ -s "$here/ca.crt" ]; then
    bundle=/tmp/patchloop-ca-bundle.crt
    cat /etc/ssl/certs/ca-certificates.crt "$here/ca.crt" >"$bundle" 2>/dev/null || cp "$here/ca.crt" "$bundle"
    export PIP_CERT="$bundle" REQUESTS_CA_BUNDLE="$bundle" SSL_CERT_FILE="$bundle" \
        CURL_CA_BUNDLE="$bundle" GIT_SSL_CAINFO="$bundle"
    mkdir -p /etc/apt/apt.conf.d
    echo "Acquire::https::CAInfo \"$bundle\";" >/etc/apt/apt.conf.d/99patchloop-ca
fi
status=0
"$@" || status=$?
rm -f /etc/apt/apt.conf.d/99patchloop-ca /tmp/patchloop-ca-bundle.crt
exit "$status"
