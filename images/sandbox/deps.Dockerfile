# patchloop dependencies layer: the project's declared dependencies on top of the base.
# Tagged by a hash of the dependency files, so a source-only change reuses it.
FROM {{BASE}}
COPY patchloop/ /tmp/patchloop-build/
RUN /bin/sh /tmp/patchloop-build/with-ca.sh /opt/venv/bin/python /tmp/patchloop-build/deps.py /tmp/patchloop-build/project \
    && rm -rf /tmp/patchloop-build /root/.cache
