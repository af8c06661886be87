"""The values a platform team expects render what they say, validate, and keep the pod safe.

Every rendering below goes through the strict schema validation of conftest.py, so each new
value is both rendered and validated; each test then checks what the value does.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from helm import values_docs
from netsight.cli import build_parser
from netsight.server.config import Settings, load_settings
from tests.conftest import ROOT
from tests.deploy.conftest import (
    CHART,
    RELEASE,
    Render,
    only,
    run_helm,
    validate_objects,
    values,
)

RENDERINGS = [
    ("default-values.yaml", "replicas=2"),
    ("default-values.yaml", "replicas=3", "podDisruptionBudget.maxUnavailable=50%"),
    ("default-values.yaml", "serviceAccount.automountToken=false"),
    ("default-values.yaml", "securityContext.readOnlyRootFilesystem=false",
     "podSecurityContext.fsGroup=2000"),
    ("default-values.yaml", "topologySpreadConstraints[0].maxSkew=2",
     "topologySpreadConstraints[0].topologyKey=kubernetes.io/hostname",
     "topologySpreadConstraints[0].whenUnsatisfiable=DoNotSchedule",
     "topologySpreadConstraints[0].labelSelector.matchLabels.tier=diagnostics"),
    ("default-values.yaml", "httpRoute.enabled=true", "httpRoute.parentRefs[0].name=gw"),
    ("full-values.yaml",),
]


def pod_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = only(objects, "Deployment")["spec"]["template"]["spec"]
    return spec


@pytest.mark.parametrize("rendering", RENDERINGS, ids="+".join)
def test_each_new_value_renders_valid_objects(render: Render, rendering: tuple[str, ...]
                                              ) -> None:
    validate_objects(render(*rendering))


def test_a_disruption_budget_only_with_more_than_one_replica(render: Render) -> None:
    assert not [o for o in render("default-values.yaml") if o["kind"] == "PodDisruptionBudget"]
    objects = render("default-values.yaml", "replicas=2")
    budget = only(objects, "PodDisruptionBudget")
    assert budget["spec"]["maxUnavailable"] == 1
    assert budget["spec"]["selector"] == only(objects, "Deployment")["spec"]["selector"]
    assert only(render("default-values.yaml", "replicas=3",
                       "podDisruptionBudget.maxUnavailable=50%"),
                "PodDisruptionBudget")["spec"]["maxUnavailable"] == "50%"
    assert not [o for o in render("default-values.yaml", "replicas=2",
                                  "podDisruptionBudget.enabled=false")
                if o["kind"] == "PodDisruptionBudget"]


def test_the_http_route_attaches_to_the_given_gateway_and_reaches_the_service(
        render: Render) -> None:
    objects = render("full-values.yaml")
    route = only(objects, "HTTPRoute")
    given = values("full-values.yaml")["httpRoute"]
    assert route["spec"]["parentRefs"] == given["parentRefs"]
    assert route["spec"]["hostnames"] == given["hostnames"]
    service = only(objects, "Service")
    (rule,) = route["spec"]["rules"]
    assert rule["backendRefs"] == [{"name": service["metadata"]["name"],
                                    "port": service["spec"]["ports"][0]["port"]}]
    assert [m["path"] for m in rule["matches"]] == [
        {"type": "PathPrefix", "value": p} for p in given["paths"]]
    assert not [o for o in render("default-values.yaml") if o["kind"] == "HTTPRoute"]


def test_an_http_route_without_a_gateway_is_refused(helm: Path) -> None:
    done = run_helm(helm, "template", RELEASE, str(CHART), "--set", "config.clusterName=c",
                    "--set", "httpRoute.enabled=true")
    assert done.returncode != 0
    assert "httpRoute.enabled needs httpRoute.parentRefs" in done.stderr


def test_the_ingress_serves_its_tls_hosts(render: Render) -> None:
    ingress = only(render("full-values.yaml"), "Ingress")
    tls_hosts = {h for entry in ingress["spec"]["tls"] for h in entry["hosts"]}
    assert tls_hosts
    assert tls_hosts <= {rule["host"] for rule in ingress["spec"]["rules"]}
    assert ingress["spec"]["tls"] == values("full-values.yaml")["ingress"]["tls"]


def test_extra_args_env_and_volumes_reach_the_container(render: Render) -> None:
    spec = pod_spec(render("full-values.yaml"))
    given = values("full-values.yaml")
    (container,) = spec["containers"]
    assert container["args"][-len(given["extraArgs"]):] == given["extraArgs"]
    flags, unknown = build_parser().parse_known_args(["serve", *container["args"]])
    assert unknown == []
    settings = load_settings(vars(flags), {"KUBERNETES_SERVICE_HOST": "10.96.0.1",
                                           **{e["name"]: e["value"] for e in container["env"]}})
    assert settings.responses == "sse"
    assert container["env"][-len(given["extraEnv"]):] == given["extraEnv"]
    own = {"tmp", "knowledge"}  # the chart's own volumes
    assert [v for v in spec["volumes"] if v["name"] not in own] == given["extraVolumes"]
    assert [m for m in container["volumeMounts"] if m["name"] not in own] == \
        given["extraVolumeMounts"]
    # Without extraArgs and with auth.mode=auto, netsight gets no arguments at all.
    assert "args" not in pod_spec(render("default-values.yaml"))["containers"][0]


def test_security_context_overrides_merge_into_the_restricted_defaults(
        render: Render) -> None:
    spec = pod_spec(render("default-values.yaml", "securityContext.readOnlyRootFilesystem=false",
                           "podSecurityContext.fsGroup=2000"))
    assert spec["securityContext"]["fsGroup"] == 2000
    assert spec["securityContext"]["runAsNonRoot"] is True
    context = spec["containers"][0]["securityContext"]
    assert context["readOnlyRootFilesystem"] is False
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert pod_spec(render("full-values.yaml"))["securityContext"]["fsGroup"] == 65532


def test_topology_spread_selects_this_releases_pods(render: Render) -> None:
    objects = render("full-values.yaml")
    selector = only(objects, "Deployment")["spec"]["selector"]
    (constraint,) = pod_spec(objects)["topologySpreadConstraints"]
    assert constraint["labelSelector"] == selector
    assert constraint["topologyKey"] == "topology.kubernetes.io/zone"
    # A selector of the user's own is kept.
    (own,) = pod_spec(render(*RENDERINGS[4]))["topologySpreadConstraints"]
    assert own["labelSelector"] == {"matchLabels": {"tier": "diagnostics"}}
    assert "topologySpreadConstraints" not in pod_spec(render("default-values.yaml"))


def test_termination_grace_outlasts_netsights_drain(render: Render) -> None:
    (field,) = [f for f in dataclasses.fields(Settings) if f.name == "shutdown_timeout"]
    drain = field.default
    assert isinstance(drain, float)
    for values_file in ("default-values.yaml", "full-values.yaml"):
        grace = pod_spec(render(values_file))["terminationGracePeriodSeconds"]
        # The drain, the watches' stop (0.35 s at 100k pods) and the endpoints' update.
        assert grace >= drain + 5, values_file
    assert pod_spec(render("full-values.yaml"))["terminationGracePeriodSeconds"] == \
        values("full-values.yaml")["terminationGracePeriodSeconds"]


def test_the_service_account_token_is_mounted_unless_turned_off(render: Render) -> None:
    assert pod_spec(render("default-values.yaml"))["automountServiceAccountToken"] is True
    assert pod_spec(render("default-values.yaml", "serviceAccount.automountToken=false")
                    )["automountServiceAccountToken"] is False


@pytest.mark.parametrize(("sets", "message"), [
    (("config.cacheTTL=30s",), "config.cacheTTL is not a netsight setting: netsight keeps "
                               "no answer cache"),
    (("features.enableIstio=auto",), "features.enableIstio was replaced by features.istio"),
    (("features.enableGatewayAPI=auto",),
     "features.enableGatewayAPI was replaced by features.gatewayAPI"),
    (("features.enableFlannel=auto",), "features.enableFlannel is not a netsight setting"),
    (("features.enableWeave=true",), "the provider switches are features.<provider>"),
])
def test_the_designs_values_are_refused_with_what_replaced_them(
        helm: Path, sets: tuple[str, ...], message: str) -> None:
    args = ["template", RELEASE, str(CHART), "--set", "config.clusterName=c"]
    for item in sets:
        args += ["--set", item]
    done = run_helm(helm, *args)
    assert done.returncode != 0
    assert message in done.stderr


def test_every_replacement_names_a_provider_switch_the_chart_has() -> None:
    helpers = (CHART / "templates" / "_helpers.tpl").read_text()
    replacements = re.search(r'\$replacements := dict (.*)', helpers)
    assert replacements is not None
    targets = re.findall(r'"(\w+)"', replacements[1])[1::2]
    features = yaml.safe_load((CHART / "values.yaml").read_text())["features"]
    assert set(targets) <= set(features)


def test_the_chart_readme_values_table_is_generated_from_values_yaml() -> None:
    readme = (CHART / "README.md").read_text()
    values_text = (CHART / "values.yaml").read_text()
    assert values_docs.rendered(readme, values_text) == readme, \
        "stale: run python helm/values_docs.py"
    assert values_docs.main(["--check"]) == 0


def leaves(node: Any, prefix: str = "") -> list[str]:
    if isinstance(node, dict) and node:
        return [leaf for key, value in node.items()
                for leaf in leaves(value, f"{prefix}{key}.")]
    return [prefix.rstrip(".")]


def test_every_value_is_documented() -> None:
    values_text = (CHART / "values.yaml").read_text()
    documented = {key for key, _ in values_docs.documented_keys(values_text)}
    for leaf in leaves(yaml.safe_load(values_text)):
        parts = leaf.split(".")
        assert any(".".join(parts[:i]) in documented for i in range(1, len(parts) + 1)), leaf


def test_the_generator_notices_a_changed_default() -> None:
    readme = (CHART / "README.md").read_text()
    values_text = (CHART / "values.yaml").read_text()
    changed = values_text.replace("terminationGracePeriodSeconds: 15",
                                  "terminationGracePeriodSeconds: 16")
    assert changed != values_text
    assert values_docs.rendered(readme, changed) != readme
    assert "| `terminationGracePeriodSeconds` | int | `16` |" in values_docs.table(changed)


def test_the_readme_rbac_table_names_every_value_that_changes_a_grant(render: Render) -> None:
    deploy = (ROOT / "README.md").read_text().partition("What the chart's RBAC grants")[2]
    table = deploy.partition("\n\n")[2].partition("\n\n")[0]
    base = only(render("default-values.yaml"), "ClusterRole")["rules"]
    for value, sets in [
        ("config.secretMetadata=true", ("config.secretMetadata=true",)),
        ("auth.mode=none", ("auth.mode=none", "auth.insecureNoAuth=true")),
        ("features.<provider>=false", ("features.istio=false",)),
        ("config.providerStatus=true", ("config.providerStatus=true",)),
    ]:
        rules = only(render("default-values.yaml", *sets), "ClusterRole")["rules"]
        assert rules != base, value
        assert f"`{value}`" in table, value
    assert "`probe.enabled=true`" in table
    assert [o for o in render("full-values.yaml") if o["kind"] == "Role"]
    # The sentence after the table, too: Secrets only with the value that grants them.
    assert "no Secrets or ConfigMaps unless `config.secretMetadata=true`" in deploy
