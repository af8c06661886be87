"""The chart configures netsight only through settings netsight reads, and grants it exactly
the kinds it watches, so the chart cannot drift from the code unnoticed.

The container's arguments go through ``netsight serve``'s own parser and, with the environment
the pod sees (the chart's variables and the kubelet's KUBERNETES_SERVICE_HOST),
through ``load_settings``, which is where netsight refuses a configuration at start. The
ClusterRole is compared with ``CORE_KINDS`` and ``PROVIDER_GROUPS`` of graph/ingest/informers.py.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
import yaml

from netsight.analyzers.core.declarations import Toolset
from netsight.cli import build_parser
from netsight.graph.ingest.discovery import (
    CORE_KINDS,
    CRD_KIND,
    METADATA_ONLY_KINDS,
    PROVIDER_GROUPS,
    PROVIDER_KINDS,
    PROVIDER_NAMESPACES,
)
from netsight.graph.ingest.event_watching import GROUP as EVENTS_GROUP
from netsight.graph.model.records import DNS_CONFIG_MAPS
from netsight.server.config import load_settings, parse_duration
from tests.deploy.conftest import CHART, VALUES_SETS, RecordingEnviron, Render, only, values


def container(objects: list[dict[str, Any]]) -> dict[str, Any]:
    (found,) = only(objects, "Deployment")["spec"]["template"]["spec"]["containers"]
    result: dict[str, Any] = found
    return result


def chart_env(values_file: str, objects: list[dict[str, Any]]) -> dict[str, str]:
    """The variables the chart itself sets (not the user's extraEnv)."""
    extra = {e["name"] for e in values(values_file).get("extraEnv", ())}
    return {e["name"]: e["value"] for e in container(objects)["env"] if e["name"] not in extra}


def plural(kind: str) -> str:
    lower = kind.lower()
    if lower.endswith(("s", "sh", "ch", "x")):
        return lower + "es"
    if lower.endswith("y") and lower[-2:-1] not in set("aeiou"):
        return lower[:-1] + "ies"
    return lower + "s"


def read_grants(objects: list[dict[str, Any]]) -> dict[str, set[str]]:
    """API group -> resources the ClusterRole lets netsight get, list and watch."""
    granted: dict[str, set[str]] = {}
    for rule in only(objects, "ClusterRole")["rules"]:
        if set(rule["verbs"]) == {"get", "list", "watch"}:
            for group in rule["apiGroups"]:
                granted.setdefault(group, set()).update(rule["resources"])
    return granted


@pytest.mark.parametrize("values_file", VALUES_SETS)
def test_every_variable_the_chart_sets_is_one_netsight_reads(
        render: Render, values_file: str) -> None:
    objects = render(values_file)
    env = chart_env(values_file, objects)
    environ = RecordingEnviron({**env, "KUBERNETES_SERVICE_HOST": "10.96.0.1"})
    load_settings({}, environ)
    assert set(env) <= environ.seen, f"netsight does not read {set(env) - environ.seen}"


# What the chart installs by default, with everything on (auth.mode=tokenreview), and without
# authentication.
RENDERINGS = [
    ("default-values.yaml",),
    ("default-values.yaml", "config.secretMetadata=true"),
    ("default-values.yaml", "config.dnsConfig=true"),
    ("full-values.yaml",),
    ("default-values.yaml", "auth.mode=none", "auth.insecureNoAuth=true"),
]


@pytest.mark.parametrize("rendering", RENDERINGS, ids="+".join)
def test_netsight_starts_with_the_flags_and_environment_the_chart_gives_it(
        render: Render, rendering: tuple[str, ...]) -> None:
    objects = render(*rendering)
    main = container(objects)
    flags, unknown = build_parser().parse_known_args(["serve", *main.get("args", [])])
    assert unknown == [], "flags netsight serve does not take"
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1",
           **{e["name"]: e["value"] for e in main["env"]}}
    settings = load_settings(vars(flags), env)
    given = values(rendering[0])
    sets = dict(item.split("=", 1) for item in rendering[1:])
    assert settings.cluster_name == given["config"]["clusterName"]
    assert settings.auth == sets.get("auth.mode", given.get("auth", {}).get("mode", "auto"))
    assert settings.host == "0.0.0.0"
    assert settings.port == main["ports"][0]["containerPort"]
    assert settings.transport == "http"
    assert settings.secret_metadata is (sets.get("config.secretMetadata", str(
        given["config"].get("secretMetadata", False)).lower()) == "true")
    assert settings.dns_config is (sets.get("config.dnsConfig", str(
        given["config"].get("dnsConfig", False)).lower()) == "true")
    assert settings.provider_status is (sets.get("config.providerStatus", str(
        given["config"].get("providerStatus", False)).lower()) == "true")
    probe = {"namespace": "mcp-diagnostics", "image": "ghcr.io/mcp-k8s-networking/probe:0.1.0",
             "maxConcurrent": 5, "enabled": False, "mode": "pod", "timeout": "30s",
             "ratePerMinute": 30, **given.get("probe", {})}
    assert (settings.probe_namespace, settings.probe_image, settings.max_concurrent_probes) \
        == (probe["namespace"], probe["image"], probe["maxConcurrent"])
    assert (settings.probes, settings.probe_mode, settings.probe_timeout,
            settings.probe_rate) == (probe["enabled"], probe["mode"],
                                     parse_duration(probe["timeout"]), probe["ratePerMinute"])
    assert settings.auth_audiences == tuple(given.get("auth", {}).get("audiences", ()))
    toolsets = given["config"].get("toolsets")
    assert settings.toolsets == (set(toolsets) if toolsets else None)


def test_the_chart_takes_exactly_the_toolsets_netsight_knows() -> None:
    schema = json.loads((CHART / "values.schema.json").read_text())
    toolsets = schema["properties"]["config"]["properties"]["toolsets"]
    assert set(toolsets["items"]["enum"]) == set(Toolset)


def test_the_cluster_role_reads_exactly_the_kinds_netsight_watches(render: Render) -> None:
    granted = read_grants(render("default-values.yaml"))
    expected: dict[str, set[str]] = {CRD_KIND.group: {CRD_KIND.plural},
                                     EVENTS_GROUP: {"events"}}
    for group, kind in CORE_KINDS:
        expected.setdefault(group, set()).add(plural(kind))
    for group, (_, kinds) in PROVIDER_GROUPS.items():
        expected[group] = {plural(k) for k in kinds} if kinds is not None else set()
    assert set(granted) == set(expected)
    for group, resources in expected.items():
        if resources:
            assert granted[group] == resources, group
        else:  # every kind of the group: listed one by one, never "*"
            assert granted[group], group
            assert all(re.fullmatch(r"[a-z]+", r) for r in granted[group])


def test_secret_and_configmap_names_are_read_only_when_asked_for(render: Render) -> None:
    core = read_grants(render("default-values.yaml"))[""]
    assert not core & {"secrets", "configmaps"}, "off by default: list/watch reads data too"
    opted_in = read_grants(render("default-values.yaml", "config.secretMetadata=true"))[""]
    assert opted_in - core == {plural(kind) for _, kind in METADATA_ONLY_KINDS}


def test_the_dns_config_maps_are_granted_by_name_only_when_asked_for(render: Render) -> None:
    def dns_roles(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return [o for o in objects if o["kind"] == "Role"
                and o["metadata"]["namespace"] == "kube-system"]

    assert not dns_roles(render("default-values.yaml"))
    objects = render("default-values.yaml", "config.dnsConfig=true")
    (role,) = dns_roles(objects)
    # Exactly the ConfigMaps netsight watches by name (one informer each, with a
    # metadata.name field selector, which resourceNames authorizes for list and watch).
    assert role["rules"] == [{"apiGroups": [""], "resources": ["configmaps"],
                              "resourceNames": sorted(name for _, name in DNS_CONFIG_MAPS),
                              "verbs": ["get", "list", "watch"]}]
    assert {ns for ns, _ in DNS_CONFIG_MAPS} == {"kube-system"}
    (binding,) = [o for o in objects if o["kind"] == "RoleBinding"
                  and o["metadata"]["namespace"] == "kube-system"]
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    # The ClusterRole is unchanged: no ConfigMap in any other namespace.
    assert read_grants(objects) == read_grants(render("default-values.yaml"))


def test_provider_status_is_granted_exactly_what_it_watches(render: Render) -> None:
    def grants(objects: list[dict[str, Any]], kind: str) -> dict[str, dict[str, set[str]]]:
        found: dict[str, dict[str, set[str]]] = {}
        for role in (o for o in objects if o["kind"] == kind):
            for rule in role["rules"]:
                if set(rule["verbs"]) == {"get", "list", "watch"}:
                    for group in rule["apiGroups"]:
                        found.setdefault(role["metadata"].get("namespace", ""), {}).setdefault(
                            group, set()).update(rule["resources"])
        return found

    def added(base: dict[str, set[str]], more: dict[str, set[str]]) -> set[tuple[str, str]]:
        return {(g, r) for g, rs in more.items() for r in rs} - \
            {(g, r) for g, rs in base.items() for r in rs}

    watched = {(k.group, k.plural) for k in PROVIDER_KINDS}
    cluster_scoped = {(k.group, k.plural) for k in PROVIDER_KINDS if not k.namespaced}
    # The whole cluster: one ClusterRole (RBAC grants no list of namespaces).
    off = grants(render("default-values.yaml"), "ClusterRole")[""]
    on = grants(render("default-values.yaml", "config.providerStatus=true"), "ClusterRole")[""]
    assert added(off, on) == watched
    # Chosen namespaces: the cluster-scoped kinds in the ClusterRole, the workloads in the
    # Roles of the chosen namespaces that are provider namespaces, and nowhere else.
    chosen = "config.namespaces={shop,kube-system,istio-system}"
    off_objects = render("default-values.yaml", chosen)
    on_objects = render("default-values.yaml", chosen, "config.providerStatus=true")
    assert added(grants(off_objects, "ClusterRole")[""],
                 grants(on_objects, "ClusterRole")[""]) == cluster_scoped
    roles_off, roles_on = grants(off_objects, "Role"), grants(on_objects, "Role")
    for ns in ("shop", "kube-system", "istio-system"):
        assert added(roles_off[ns], roles_on[ns]) == \
            (watched - cluster_scoped if ns in PROVIDER_NAMESPACES else set()), ns
    helper = (CHART / "templates" / "_helpers.tpl").read_text()
    listed = re.search(r'define "netsight.providerNamespaces" -}}\n\[([^]]*)\]', helper)
    assert listed is not None
    assert tuple(n.strip() for n in listed.group(1).split(",")) == PROVIDER_NAMESPACES


def test_a_feature_flag_per_provider_withholds_exactly_its_groups(render: Render) -> None:
    features = list(yaml.safe_load((CHART / "values.yaml").read_text())["features"])
    provider_of = {group: provider.replace("-", "")
                   for group, (provider, _) in PROVIDER_GROUPS.items()}
    assert {key.lower() for key in features} == set(provider_of.values())
    everything = set(read_grants(render("default-values.yaml")))
    for key in features:
        granted = set(read_grants(render("default-values.yaml", f"features.{key}=false")))
        assert everything - granted == {g for g, p in provider_of.items() if p == key.lower()}
