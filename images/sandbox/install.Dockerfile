# patchloop install layer: the project installed editable, built without network. Keyed by the
# dependencies image and the checkout's top-level layout, so a source-only change reuses it.
FROM {{DEPS}}
COPY patchloop-opt/ /opt/patchloop/
COPY --chown=1000:1000 workspace/ /workspace/
RUN /bin/sh /opt/patchloop/install.sh
