# syntax=docker/dockerfile:1
# netsight serve in a container: built in one stage, run from a slim Python image without
# build tools, as a non-root user, on a read-only root filesystem (the only writable path it
# needs is /tmp; the Helm chart mounts an emptyDir there).
# The base image by tag and digest: the tag says what it is, the digest makes every build start
# from the same bytes. No digest is committed yet (none could be looked up where this was
# written), so the build refuses to start ("invalid reference format") until one is given:
#   docker build --build-arg PYTHON_DIGEST="$(docker buildx imagetools inspect python:3.11-slim \
#     --format '{{json .Manifest.Digest}}' | tr -d '"')" .
# Committing that value as the default below pins the image for everyone; refresh both together.
ARG PYTHON_IMAGE=python:3.11-slim
ARG PYTHON_DIGEST

FROM ${PYTHON_IMAGE}@${PYTHON_DIGEST} AS builder
ENV PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
# Every package from requirements/*.lock (bash .ci/lock.sh), hash-checked: pip and setuptools
# into a build venv, the dependencies into a venv that gets no pip or setuptools of its own
# (pip --python installs into it from outside). This layer stays cached when only code changes.
COPY requirements/build.lock requirements/runtime.lock ./requirements/
RUN python -m venv /opt/build \
    && /opt/build/bin/pip install --require-hashes -r requirements/build.lock \
    && python -m venv --without-pip /opt/netsight \
    && /opt/build/bin/pip --python /opt/netsight/bin/python install --require-hashes \
       -r requirements/runtime.lock
COPY pyproject.toml README.md ./
COPY netsight ./netsight
# A wheel of netsight alone, built by the locked setuptools, then installed without resolving
# anything: no sources, tests or build requirements reach the final image. pip compiles the
# bytecode here, because the running container cannot write it.
RUN /opt/build/bin/pip wheel --no-deps --no-build-isolation --wheel-dir /dist . \
    && /opt/build/bin/pip --python /opt/netsight/bin/python install --no-deps /dist/*.whl

FROM ${PYTHON_IMAGE}@${PYTHON_DIGEST}
ARG VERSION=0.1.0
ARG REVISION=unknown
LABEL org.opencontainers.image.title="netsight" \
      org.opencontainers.image.description="Answers Kubernetes networking questions for AI agents (MCP) and SREs from a live in-memory graph" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.revision="${REVISION}" \
      org.opencontainers.image.licenses="Apache-2.0"
# A named user with a fixed numeric UID: Kubernetes' runAsNonRoot can only verify a numeric
# USER, and a passwd entry keeps libraries that look the user up working. The base image's own
# pip, setuptools (65.5 on 3.11) and wheel go: netsight's venv does not see them, and nothing
# installs at run time, so they would only be old code for scanners to flag.
RUN groupadd --system --gid 65532 netsight \
    && useradd --system --uid 65532 --gid 65532 --home-dir /tmp --no-create-home \
       --shell /usr/sbin/nologin netsight \
    && python -m pip uninstall --yes --no-cache-dir pip setuptools wheel
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
