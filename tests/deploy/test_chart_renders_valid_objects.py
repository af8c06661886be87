"""The chart lints, refuses values it cannot deploy, and renders objects Kubernetes accepts.

Every rendered object is checked against the API schemas kubernetes-validate bundles, in
strict mode (unknown fields are errors), for the oldest Kubernetes the chart supports
(Chart.yaml's kubeVersion), one between and the newest it knows. The HTTPRoute, a custom
resource kubernetes-validate does not know, is checked against the Gateway API CRD's schema
(tests/deploy/schemas), just as strictly.
"""

from __future__ import annotations

from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml

from tests.deploy.conftest import (
    CHART,
    OLDEST,
    RELEASE,
    VALUES_SETS,
    Render,
    run_helm,
    validate_custom,
    validate_objects,
)


def test_the_values_sets_cover_defaults_and_every_option(render: Render) -> None:
    assert VALUES_SETS == ["default-values.yaml", "full-values.yaml"]
    kinds = {o["kind"] for name in VALUES_SETS for o in render(name)}
    assert {"PodDisruptionBudget", "HTTPRoute", "Ingress", "NetworkPolicy", "ServiceMonitor",
            "PrometheusRule"} <= kinds
    kube_version = yaml.safe_load((CHART / "Chart.yaml").read_text())["kubeVersion"]
    assert kube_version.startswith(f">={OLDEST}.")


@pytest.mark.parametrize("values_file", [None, *VALUES_SETS])
def test_helm_lint_strict_passes(helm: Path, values_file: str | None) -> None:
    args = ["lint", "--strict", str(CHART)]
    if values_file:
        args += ["-f", str(CHART / "ci" / values_file)]
    done = run_helm(helm, *args)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize(("sets", "message"), [
    ((), "config.clusterName is required"),
    (("config.clusterName=a b",), "/config/clusterName"),
    (("config.clusterName=c", "config.logLevel=verbose"), "/config/logLevel"),
    (("config.clusterName=c", "config.toolTimeout=10 seconds"), "/config/toolTimeout"),
    (("config.clusterName=c", "image.tag=latest"), "image.tag=latest: pin a version"),
    (("config.clusterName=c", "confg.logLevel=debug"), "'confg' not allowed"),
    (("config.clusterName=c", "auth.mode=none"), "set auth.insecureNoAuth=true"),
    (("config.clusterName=c", "auth.mode=none", "auth.insecureNoAuth=true",
      "probe.enabled=true"), "probe.enabled needs auth.mode tokenreview or auto"),
    (("config.clusterName=c", "probe.mode=exec"), "/probe/mode"),
])
def test_values_netsight_cannot_run_with_fail_the_install(
        helm: Path, sets: tuple[str, ...], message: str) -> None:
    args = ["template", RELEASE, str(CHART)]
    for item in sets:
        args += ["--set", item]
    done = run_helm(helm, *args)
    assert done.returncode != 0
    assert message in done.stderr


@pytest.mark.parametrize("values_file", VALUES_SETS)
def test_every_object_validates_strictly(render: Render, values_file: str) -> None:
    objects = render(values_file)
    assert objects
    validate_objects(objects)


def test_strict_validation_of_the_http_route_catches_a_misplaced_field(render: Render) -> None:
    route = next(o for o in render("full-values.yaml") if o["kind"] == "HTTPRoute")
    broken = yaml.safe_load(yaml.safe_dump(route))
    broken["spec"]["rules"][0]["backendRefs"][0]["service"] = "ns-netsight"
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(broken)
    broken = yaml.safe_load(yaml.safe_dump(route))
    broken["spec"]["rules"][0]["matches"][0]["path"]["type"] = "Prefix"  # Ingress spelling
    with pytest.raises(jsonschema.ValidationError):
        validate_custom(broken)


def test_strict_validation_catches_a_misplaced_field(render: Render) -> None:
    deployment = next(o for o in render("default-values.yaml") if o["kind"] == "Deployment")
    broken = yaml.safe_load(yaml.safe_dump(deployment))
    broken["spec"]["template"]["spec"]["containers"][0]["readOnlyRootFilesystem"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, OLDEST, strict=True)


@pytest.mark.parametrize("values_file", VALUES_SETS)
def test_install_notes_render(helm: Path, values_file: str) -> None:
    done = run_helm(helm, "install", RELEASE, str(CHART), "--dry-run=client",
                    "-f", str(CHART / "ci" / values_file))
    assert done.returncode == 0, done.stderr
    notes = done.stdout.partition("NOTES:")[2]
    assert "port-forward service/ns-netsight 8080:8080" in notes
    assert "/mcp" in notes
    # full-values.yaml turns on the HTTPRoute with a hostname.
    if values_file == "full-values.yaml":
        assert "https://netsight.example.com/mcp (HTTPRoute" in notes
    # Both value sets leave auth on: the notes say how to call with a token.
    assert "TokenReview" in notes
    assert "Authorization: Bearer" in notes
