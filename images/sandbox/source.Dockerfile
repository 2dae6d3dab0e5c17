# patchloop sandbox image: the checkout in /workspace on top of its dependencies layer.
# Built without network: the editable install must work offline.
FROM {{DEPS}}
COPY patchloop-opt/ /opt/patchloop/
COPY --chown=1000:1000 workspace/ /workspace/
RUN /bin/sh /opt/patchloop/finalize.sh
USER 1000:1000
{{LABELS}}
