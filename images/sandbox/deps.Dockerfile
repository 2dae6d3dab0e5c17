# patchloop dependencies layer: the project's declared dependencies on top of the base.
# Tagged by a hash of the dependency files and what CI installs (ci-deps.json), so a source-only
# change reuses it. deps.py decides what to install, gets a wheel of each (retrying alone and
# leaving out what fails), installs the wheels from that directory only and writes
# /opt/patchloop/deps.json; the wheels are gone before the layer is committed.
FROM {{BASE}}
COPY patchloop/ /tmp/patchloop-build/
RUN /bin/sh /tmp/patchloop-build/with-ca.sh /bin/sh -c '/opt/venv/bin/python /tmp/patchloop-build/deps.py wheel /tmp/patchloop-build/project /tmp/patchloop-wheels && /opt/venv/bin/python /tmp/patchloop-build/deps.py install /tmp/patchloop-wheels' \
    && rm -rf /tmp/patchloop-build /tmp/patchloop-wheels /root/.cache
