# syntax=docker/dockerfile:1
# netsight serve in a container: built in one stage, run from a slim Python image without
# build tools, as a non-root user, on a read-only root filesystem (the only writable path it
# needs is /tmp; the Helm chart mounts an emptyDir there).
ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md ./
COPY netsight ./netsight
# A wheel first, then a venv holding only that wheel and its dependencies: no sources, tests or
# build requirements reach the final image. pip compiles the bytecode here, because the running
# container cannot write it.
RUN python -m pip wheel --no-deps --wheel-dir /dist . \
    && python -m venv /opt/netsight \
    && /opt/netsight/bin/pip install /dist/*.whl \
    && /opt/netsight/bin/pip uninstall --yes pip

FROM ${PYTHON_IMAGE}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="netsight" \
      org.opencontainers.image.description="Answers Kubernetes networking questions for AI agents (MCP) and SREs from a live in-memory graph" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
# A named user with a fixed numeric UID: Kubernetes' runAsNonRoot can only verify a numeric
# USER, and a passwd entry keeps libraries that look the user up working.
RUN groupadd --system --gid 65532 netsight \
    && useradd --system --uid 65532 --gid 65532 --home-dir /tmp --no-create-home \
       --shell /usr/sbin/nologin netsight
COPY --from=builder /opt/netsight /opt/netsight
# HOST rather than a --host flag: arguments given to the container (`--demo`, `--port 9000`)
# are appended to the entrypoint and keep it listening on every interface, and the chart can
# still override it.
ENV PATH=/opt/netsight/bin:$PATH \
    PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    HOME=/tmp \
    HOST=0.0.0.0 \
    PORT=8080
USER 65532:65532
WORKDIR /tmp
EXPOSE 8080
ENTRYPOINT ["netsight", "serve"]
