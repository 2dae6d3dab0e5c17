# patchloop dependencies layer of a Rust or Node project (deps.sh is rust-deps.sh or
# node-deps.sh): tagged by a hash of the manifests and lock files, so a source-only change
# reuses it.
FROM {{BASE}}
COPY patchloop/ /tmp/patchloop-build/
RUN /bin/sh /tmp/patchloop-build/with-ca.sh /bin/sh /tmp/patchloop-build/deps.sh /tmp/patchloop-build/project \
    && rm -rf /tmp/patchloop-build /root/.cache /root/.npm /tmp/.cargo /tmp/.npm
