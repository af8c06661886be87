"""What the chart grants netsight, and how its pod runs.

netsight is a read-only diagnostics server: cluster-wide it may only read, apart from the
reviews that check its callers (TokenReview, SubjectAccessReview, which change nothing); the
only objects it may create are probe pods, only when probes are enabled and only in the
namespaces they run in. Its pod meets the restricted Pod Security Standard with a read-only
root filesystem.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.deploy.conftest import (
    RELEASE_NAMESPACE,
    VALUES_SETS,
    Render,
    only,
    validate_objects,
    values,
)

READ = {"get", "list", "watch"}
REVIEWS = {("authentication.k8s.io", "tokenreviews"), ("authorization.k8s.io",
                                                       "subjectaccessreviews")}


def pod_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    spec: dict[str, Any] = only(objects, "Deployment")["spec"]["template"]["spec"]
    return spec


def grants(rules: list[dict[str, Any]]) -> set[tuple[str, str, str]]:
    return {(group, resource, verb) for rule in rules for group in rule["apiGroups"]
            for resource in rule["resources"] for verb in rule["verbs"]}


@pytest.mark.parametrize("values_file", VALUES_SETS)
def test_the_pod_runs_restricted_on_a_read_only_root(render: Render, values_file: str) -> None:
    spec = pod_spec(render(values_file))
    assert spec["securityContext"]["runAsNonRoot"] is True
    assert spec["securityContext"]["runAsUser"] != 0
    assert spec["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    assert not {"hostNetwork", "hostPID", "hostIPC"} & {k for k, v in spec.items() if v}
    (container,) = spec["containers"]
    context = container["securityContext"]
    assert context["allowPrivilegeEscalation"] is False
    assert context["readOnlyRootFilesystem"] is True
    assert context["capabilities"] == {"drop": ["ALL"]}
    assert context.get("privileged") is not True
    mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    # /tmp and the knowledge base's directory (its SQLite file) are the only writable paths;
    # what extraVolumeMounts add is the user's, read-only here.
    writable = {m["mountPath"] for m in container["volumeMounts"] if not m.get("readOnly")}
    assert writable == {"/tmp", "/var/lib/netsight"}
    assert mounts["/var/lib/netsight"] == "knowledge"
    assert set(mounts) - writable == {m["mountPath"] for m in
                                      values(values_file).get("extraVolumeMounts", ())}
    assert "emptyDir" in volumes[mounts["/tmp"]]
    assert not any("hostPath" in v for v in volumes.values())
    assert not container["image"].endswith(":latest")
    assert container["resources"]["limits"]["memory"]


@pytest.mark.parametrize("values_file", VALUES_SETS)
def test_the_kubelet_probes_health_and_readiness(render: Render, values_file: str) -> None:
    (container,) = pod_spec(render(values_file))["containers"]
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "http"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "http"}
    assert [p["name"] for p in container["ports"]] == ["http"]


@pytest.mark.parametrize("values_file", VALUES_SETS)
def test_rbac_names_every_verb_and_resource(render: Render, values_file: str) -> None:
    for obj in render(values_file):
        for rule in obj.get("rules", ()):
            for field in ("apiGroups", "resources", "verbs"):
                assert "*" not in rule.get(field, ()), (obj["kind"], rule)
            assert "nonResourceURLs" not in rule
            assert "resourceNames" not in rule


@pytest.mark.parametrize("values_file", VALUES_SETS)
def test_cluster_wide_netsight_only_reads_and_reviews(render: Render, values_file: str) -> None:
    objects = render(values_file)
    granted = grants(only(objects, "ClusterRole")["rules"])
    writes = {(g, r, v) for g, r, v in granted if v not in READ}
    assert writes == {(g, r, "create") for g, r in REVIEWS}
    # Secrets and ConfigMaps hold no networking facts; reading them would leak credentials.
    assert not {r for _, r, _ in granted} & {"secrets", "configmaps", "pods/exec", "pods/log"}
    assert ("", "pods", "create") not in granted
    binding = only(objects, "ClusterRoleBinding")
    assert binding["roleRef"]["name"] == only(objects, "ClusterRole")["metadata"]["name"]
    assert binding["subjects"] == [{
        "kind": "ServiceAccount", "namespace": RELEASE_NAMESPACE,
        "name": pod_spec(objects)["serviceAccountName"]}]


def test_without_auth_netsight_may_not_even_review(render: Render) -> None:
    objects = render("default-values.yaml", "auth.mode=none", "auth.insecureNoAuth=true")
    verbs = {v for _, _, v in grants(only(objects, "ClusterRole")["rules"])}
    assert verbs == READ


def test_probe_pods_are_created_only_where_probes_run(render: Render) -> None:
    assert not [o for o in render("default-values.yaml") if o["kind"] in {"Role", "Namespace"}]
    objects = render("full-values.yaml")
    probe = values("full-values.yaml")["probe"]
    assert probe["namespace"] != RELEASE_NAMESPACE
    namespace = only(objects, "Namespace")
    assert namespace["metadata"]["name"] == probe["namespace"]
    assert namespace["metadata"]["labels"]["pod-security.kubernetes.io/enforce"] == "restricted"
    roles = {o["metadata"]["namespace"]: o for o in objects if o["kind"] == "Role"}
    # The probe namespace, and the namespaces of the source pods probes may act as.
    assert set(roles) == {probe["namespace"], *probe["namespaces"]}
    pods = {("", "pods", "create"), ("", "pods", "delete")}
    assert grants(roles[probe["namespace"]]["rules"]) == pods
    for source in probe["namespaces"]:  # ephemeral mode: a container in the source pod
        assert grants(roles[source]["rules"]) == pods | {("", "pods/ephemeralcontainers",
                                                           "patch")}
    bindings = {o["metadata"]["namespace"]: o for o in objects if o["kind"] == "RoleBinding"}
    assert set(bindings) == set(roles)
    for where, binding in bindings.items():
        assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                                      "name": roles[where]["metadata"]["name"]}
        assert binding["subjects"][0]["namespace"] == RELEASE_NAMESPACE
    # Read, never exec'd or its logs read: the answer is in the pod's status.
    assert not {r for role in roles.values() for _, r, _ in grants(role["rules"])} & {
        "pods/exec", "pods/log"}


def test_in_pod_mode_probes_patch_no_pod(render: Render) -> None:
    objects = render("default-values.yaml", "probe.enabled=true", "probe.namespaces={shop}")
    roles = {o["metadata"]["namespace"]: o for o in objects if o["kind"] == "Role"}
    assert set(roles) == {"mcp-diagnostics", "shop"}
    assert all(grants(r["rules"]) == {("", "pods", "create"), ("", "pods", "delete")}
               for r in roles.values())
    validate_objects(objects)


def test_the_service_and_ingress_reach_the_pod(render: Render) -> None:
    objects = render("full-values.yaml")
    pod_labels = only(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
    service = only(objects, "Service")
    assert service["spec"]["selector"].items() <= pod_labels.items()
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]
    for rule in only(objects, "Ingress")["spec"]["rules"]:
        for path in rule["http"]["paths"]:
            assert path["backend"]["service"] == {
                "name": service["metadata"]["name"], "port": {"name": "http"}}
