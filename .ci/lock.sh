#!/usr/bin/env bash
# Compiles requirements/*.lock from pyproject.toml: `bash .ci/lock.sh` after changing a
# dependency, `bash .ci/lock.sh --upgrade` to move every pin to the newest release allowed.
# One universal lock per need (markers, not one file per Python), with the hashes of every
# wheel and sdist, so that one file installs hash-checked on Python 3.11-3.13, x86_64 or aarch64.
#   runtime.lock  what the image runs (Dockerfile), with the postgres extra
#   dev.lock      runtime plus the dev and bench extras (.ci/run: the suite's smoke test
#                 draws the plots too), held to runtime.lock's versions
#   build.lock    pip and build-system.requires: the installer, and the backend that builds
#                 netsight itself without build isolation
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${UV:-}" ]]; then
    UV=$(command -v .venv/bin/uv || command -v uv) \
        || { echo ".ci/lock.sh: needs uv (pip install uv, or the dev extra)" >&2; exit 1; }
fi
compile() {
    "$UV" pip compile --quiet --universal --python-version 3.11 --generate-hashes \
        --custom-compile-command "bash .ci/lock.sh" "$@"
}
compile pyproject.toml --extra postgres --output-file requirements/runtime.lock "$@"
compile pyproject.toml --extra postgres --extra dev --extra bench --constraint requirements/runtime.lock \
    --output-file requirements/dev.lock "$@"
python3 -c 'import tomllib; print("pip", *tomllib.load(open("pyproject.toml", "rb"))
                                         ["build-system"]["requires"], sep="\n")' \
    | compile - --output-file requirements/build.lock "$@"
