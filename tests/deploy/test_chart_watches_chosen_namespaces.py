"""config.namespaces: netsight watches only those namespaces, through a Role and RoleBinding
in each instead of the ClusterRole's namespaced reads; a small ClusterRole keeps the
cluster-scoped reads rbac.clusterReads asks for (and the reviews of callers' tokens). The
rendering validates strictly for every Kubernetes version the chart supports, and the
grants add up to what netsight watches cluster-wide."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from netsight.cli import build_parser
from netsight.server.config import load_settings
from tests.deploy.conftest import (
    CHART,
    RELEASE,
    RELEASE_NAMESPACE,
    Render,
    only,
    run_helm,
    validate_objects,
)
from tests.deploy.test_chart_is_restricted_and_read_only import READ, REVIEWS, grants
from tests.deploy.test_chart_tracks_netsight import container

NAMESPACES = ("config.namespaces={shop,data}",)
NO_CLUSTER_READS = tuple(f"rbac.clusterReads.{key}=false"
                         for key in ("namespaces", "policies", "crds", "classes"))


def of_kind(objects: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [o for o in objects if o["kind"] == kind]


@pytest.mark.parametrize("sets", [(), NAMESPACES, (*NAMESPACES, *NO_CLUSTER_READS),
                                  # Probes need authenticated callers: off without auth.
                                  (*NAMESPACES, "auth.mode=none", "auth.insecureNoAuth=true",
                                   "probe.enabled=false", *NO_CLUSTER_READS)],
                         ids=["off", "on", "on-no-cluster-reads", "on-no-clusterrole"])
def test_renders_valid_objects_with_the_value_on_and_off(
        helm: Path, render: Render, sets: tuple[str, ...]) -> None:
    args = ["lint", "--strict", str(CHART), "--set", "config.clusterName=c"]
    for item in sets:
        args += ["--set", item]
    done = run_helm(helm, *args)
    assert done.returncode == 0, done.stdout + done.stderr
    validate_objects(render("full-values.yaml", *sets))
    validate_objects(render("default-values.yaml", *sets))


def test_roles_in_each_namespace_replace_the_cluster_wide_namespaced_reads(
        render: Render) -> None:
    whole = render("full-values.yaml")
    scoped = render("full-values.yaml", *NAMESPACES)
    cluster_wide = grants(only(whole, "ClusterRole")["rules"])
    roles = {o["metadata"]["namespace"]: o for o in of_kind(scoped, "Role")
             if not o["metadata"]["name"].endswith("-probes")}
    assert sorted(roles) == ["data", "shop"]
    in_namespace = grants(roles["shop"]["rules"])
    assert grants(roles["data"]["rules"]) == in_namespace
    assert {v for _, _, v in in_namespace} == READ
    cluster_reads = {g for g in grants(only(scoped, "ClusterRole")["rules"]) if g[2] in READ}
    # Nothing lost and nothing added: the Roles and the small ClusterRole together grant
    # what the ClusterRole grants cluster-wide, and no kind is in both.
    assert in_namespace | cluster_reads == {g for g in cluster_wide if g[2] in READ}
    assert not {(g, r) for g, r, _ in in_namespace} & {(g, r) for g, r, _ in cluster_reads}
    assert ("", "namespaces", "list") in cluster_reads
    assert ("", "pods", "list") in in_namespace
    assert ("policy.networking.k8s.io", "adminnetworkpolicies", "list") in cluster_reads
    for namespace, role in roles.items():
        binding = next(o for o in of_kind(scoped, "RoleBinding")
                       if o["metadata"]["namespace"] == namespace
                       and o["roleRef"]["name"] == role["metadata"]["name"])
        assert binding["subjects"] == [{"kind": "ServiceAccount",
                                        "name": container_account(scoped),
                                        "namespace": RELEASE_NAMESPACE}]


def test_cluster_reads_are_each_a_switch_and_reviews_stay(render: Render) -> None:
    scoped = render("default-values.yaml", *NAMESPACES, *NO_CLUSTER_READS)
    assert {(g, r) for g, r, _ in grants(only(scoped, "ClusterRole")["rules"])} == REVIEWS
    # Without listing Namespaces, each Role lets netsight get its own namespace's object.
    for role in of_kind(scoped, "Role"):
        assert ("", "namespaces", "get") in grants(role["rules"])
        assert ("", "namespaces", "list") not in grants(role["rules"])
    assert not [role for role in of_kind(render("default-values.yaml", *NAMESPACES), "Role")
                if ("", "namespaces", "get") in grants(role["rules"])]
    without = render("default-values.yaml", *NAMESPACES, *NO_CLUSTER_READS,
                     "auth.mode=none", "auth.insecureNoAuth=true")
    assert not of_kind(without, "ClusterRole")
    assert not of_kind(without, "ClusterRoleBinding")
    crds_only = render("default-values.yaml", *NAMESPACES, *NO_CLUSTER_READS[:2],
                       "rbac.clusterReads.classes=false")
    assert {(g, r) for g, r, v in grants(only(crds_only, "ClusterRole")["rules"])
            if v in READ} == {("apiextensions.k8s.io", "customresourcedefinitions")}


def test_netsight_starts_watching_the_namespaces_the_chart_gives_it(render: Render) -> None:
    main = container(render("full-values.yaml", *NAMESPACES))
    flags, unknown = build_parser().parse_known_args(["serve", *main.get("args", [])])
    assert unknown == []
    env = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", **{e["name"]: e["value"]
                                                      for e in main["env"]}}
    assert env["NAMESPACE"] == "shop,data"
    assert load_settings(vars(flags), env).namespaces == ("data", "shop")
    assert "NAMESPACE" not in {e["name"] for e in container(render("full-values.yaml"))["env"]}


def test_a_bad_namespace_fails_the_install(helm: Path) -> None:
    done = run_helm(helm, "template", RELEASE, str(CHART), "--set", "config.clusterName=c",
                    "--set", "config.namespaces={Shop}")
    assert done.returncode != 0
    assert "/config/namespaces/0" in done.stderr


def container_account(objects: list[dict[str, Any]]) -> str:
    name: str = only(objects, "Deployment")["spec"]["template"]["spec"]["serviceAccountName"]
    return name


def test_probe_pods_are_read_where_no_watched_namespace_role_reads_them(
        render: Render) -> None:
    # NAMESPACE mode: netsight watches probe pods per namespace, the probe namespace too.
    objects = render("full-values.yaml", "config.namespaces={shop,payments}")
    probes = {o["metadata"]["namespace"]: grants(o["rules"]) for o in of_kind(objects, "Role")
              if o["metadata"]["name"].endswith("-probes")}
    read = {("", "pods", verb) for verb in ("get", "list", "watch")}
    assert read <= probes["netsight-probes"]
    assert not read & probes["shop"]  # its namespace Role reads every kind there already
    whole = render("full-values.yaml")
    assert not any(read & grants(o["rules"]) for o in of_kind(whole, "Role"))

