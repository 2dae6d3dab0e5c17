# patchloop dependencies layer, stage 1 of 2 (wheels), on the builder image (the base plus a C
# toolchain, images/builder/; the base itself when no toolchain could be installed). deps.py
# decides what to install and gets a wheel of each into /tmp/patchloop-wheels (building what has
# no wheel for this Python, retrying alone and leaving out what fails). Stage 2
# (`prepare::install_wheels`) copies that directory onto the base and installs it from there
# only, in a network-less container committed as one layer: neither the compilers nor the
# wheels reach the sandbox image. Tagged by a hash of the dependency files and what CI installs
# (ci-deps.json), so a source-only change reuses the result.
FROM {{BUILDER}}
COPY patchloop/ /tmp/patchloop-build/
RUN /bin/sh /tmp/patchloop-build/with-ca.sh /opt/venv/bin/python /tmp/patchloop-build/deps.py wheel /tmp/patchloop-build/project /tmp/patchloop-wheels \
    && cp /tmp/patchloop-build/deps.py /tmp/patchloop-wheels/deps.py \
    && rm -rf /tmp/patchloop-build /root/.cache
