# The subject layer, built by bench/subject.py (not by `bench images build`): this folder
# plus subject.tgz (the packed subject, SHA-256 recorded) and bench-ca.crt as context.
ARG PARENT
FROM ${PARENT}
COPY --chown=bench:bench bench-ca.crt subject.tgz scaffold.sh /opt/subject/
USER bench
RUN sh /opt/subject/scaffold.sh && rm /opt/subject/bench-ca.crt
USER root
WORKDIR /workspace
