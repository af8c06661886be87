# syntax=docker/dockerfile:1
# The default probe image (PROBE_IMAGE): Python and netsight's probe program
# (netsight/probes/program.py, standard library only), run as a numeric non-root user, so a
# probe pod meets the restricted Pod Security Standard on a read-only root filesystem.
# The base image by tag and digest, as the Dockerfile pins netsight's:
#   docker build -f probe.Dockerfile --build-arg PYTHON_DIGEST="$(docker buildx imagetools \
#     inspect python:3.13-slim --format '{{json .Manifest.Digest}}' | tr -d '"')" -t probe .
ARG PYTHON_IMAGE=python:3.13-slim
ARG PYTHON_DIGEST

FROM ${PYTHON_IMAGE}@${PYTHON_DIGEST}
LABEL org.opencontainers.image.title="netsight-probe" \
      org.opencontainers.image.description="Answers one netsight probe (TCP, HTTP, DNS) through its termination message" \
      org.opencontainers.image.licenses="Apache-2.0"
# Nothing installs at run time: the base image's pip, setuptools and wheel go.
RUN python -m pip uninstall --yes --no-cache-dir pip setuptools wheel
COPY netsight/probes/program.py /opt/netsight-probe/program.py
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1
USER 65532:65532
ENTRYPOINT ["python", "/opt/netsight-probe/program.py"]
