"""The probe pod as the API server receives it: held to the restricted Pod Security
Standard, short-lived, never Ready, carrying the source's policy identity and not its
controllers' bookkeeping, and its question in the annotation and the environment."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from netsight.probes.message import ANNOTATION, ENV_VAR, TcpProbe
from netsight.probes.pods import Identity, probe_pod
from tests.probes.conftest import CLIENT_LABELS, IMAGE, Probing

pytestmark = pytest.mark.anyio

SPEC = TcpProbe(host="db.data.svc", port=5432, timeout_seconds=2.0)


def restricted_violations(pod: dict[str, Any]) -> list[str]:
    """The checks of the Pod Security Standards' restricted profile (v1.34) that apply to a
    pod's own spec, as kubernetes.io/docs/concepts/security/pod-security-standards lists."""
    spec = pod["spec"]
    found = [f"spec.{key}" for key in ("hostNetwork", "hostPID", "hostIPC") if spec.get(key)]
    pod_context = spec.get("securityContext") or {}
    volumes = [v for v in spec.get("volumes") or ()
               if not set(v) - {"name"} <= {"configMap", "csi", "downwardAPI", "emptyDir",
                                             "ephemeral", "persistentVolumeClaim",
                                             "projected", "secret"}]
    found += [f"volume {v['name']}" for v in volumes]
    for container in [*spec.get("containers", ()), *spec.get("initContainers", ())]:
        context = container.get("securityContext") or {}
        name = container["name"]
        if context.get("privileged"):
            found.append(f"{name}: privileged")
        if context.get("allowPrivilegeEscalation") is not False:
            found.append(f"{name}: allowPrivilegeEscalation must be false")
        caps = context.get("capabilities") or {}
        if "ALL" not in (caps.get("drop") or ()):
            found.append(f"{name}: capabilities must drop ALL")
        if set(caps.get("add") or ()) - {"NET_BIND_SERVICE"}:
            found.append(f"{name}: adds capabilities")
        if context.get("runAsNonRoot", pod_context.get("runAsNonRoot")) is not True:
            found.append(f"{name}: runAsNonRoot must be true")
        if context.get("runAsUser", pod_context.get("runAsUser")) == 0:
            found.append(f"{name}: runs as root")
        seccomp = (context.get("seccompProfile") or pod_context.get("seccompProfile") or {})
        if seccomp.get("type") not in ("RuntimeDefault", "Localhost"):
            found.append(f"{name}: seccompProfile must be RuntimeDefault")
        if any(p.get("hostPort") for p in container.get("ports") or ()):
            found.append(f"{name}: hostPort")
    return found


async def test_the_probe_pod_is_restricted_short_lived_and_never_ready(probes: Probing
                                                                       ) -> None:
    seen = await probes.runner.run(SPEC, source=("shop", "web-1"))
    pod = probes.kubelet.seen[seen.pod.split("/")[1]]
    spec, (container,) = pod["spec"], pod["spec"]["containers"]
    assert restricted_violations(pod) == []
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert container["resources"]["limits"]
    assert container["resources"]["requests"]
    assert spec["restartPolicy"] == "Never"
    assert 2 < spec["activeDeadlineSeconds"] <= 60
    assert spec["automountServiceAccountToken"] is False
    assert container["terminationMessagePolicy"] == "FallbackToLogsOnError"
    assert container["image"] == IMAGE
    # Never Ready: a readiness check of a port nothing in the pod listens on, so no
    # Service selecting the labels it copied ever routes to it.
    assert container["readinessProbe"] == {"tcpSocket": {"port": 1}, "periodSeconds": 3600,
                                           "failureThreshold": 1}
    assert [phase for _, phase in probes.kubelet.statuses] == ["Running", "Succeeded"]
    # The simulated kubelet judges that check by the data plane's listeners: it fails.
    assert probes.recorder.ready == []
    # The question, readable with kubectl, and handed to the container by the downward API.
    assert orjson.loads(pod["metadata"]["annotations"][ANNOTATION]) == \
        SPEC.model_dump(mode="json", by_alias=True)
    assert container["env"] == [{"name": ENV_VAR, "valueFrom": {"fieldRef": {
        "fieldPath": f"metadata.annotations['{ANNOTATION}']"}}}]


async def test_the_probe_takes_the_sources_identity_not_its_controllers(probes: Probing
                                                                        ) -> None:
    seen = await probes.runner.run(SPEC, source=("shop", "web-1"))
    pod = probes.kubelet.seen[seen.pod.split("/")[1]]
    meta, spec = pod["metadata"], pod["spec"]
    probe_id = meta["labels"]["netsight.io/probe-id"]
    assert meta["namespace"] == "shop"
    assert meta["labels"] == {"app": "web", "tier": "front", "netsight.io/probe-id": probe_id,
                              "app.kubernetes.io/managed-by": "netsight"}
    assert "pod-template-hash" in CLIENT_LABELS  # dropped: no ReplicaSet counts it as its own
    assert spec["serviceAccountName"] == "web"
    assert spec["dnsConfig"] == {"options": [{"name": "ndots", "value": "2"}]}
    # Mesh opt-ins follow the source; the injector's record of its own work does not.
    assert meta["annotations"]["sidecar.istio.io/inject"] == "false"
    assert "sidecar.istio.io/status" not in meta["annotations"]
    assert "team" not in meta["annotations"]
    # Controlled by its Namespace: no ReplicaSet, DaemonSet or ReplicationController whose
    # selector matches the copied labels adopts a pod that has a controller already.
    namespace_uid = probes.sim.state.objects[("", "Namespace")]["shop"]["metadata"]["uid"]
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Namespace",
                                        "name": "shop", "uid": namespace_uid,
                                        "controller": True}]
    assert any("app.kubernetes.io/managed-by" in note for note in seen.notes)


def test_a_statefulset_pods_per_pod_labels_are_not_copied() -> None:
    from netsight.probes.pods import identity_of

    db = {"metadata": {"name": "db-0", "namespace": "data", "labels": {
        "app": "db", "statefulset.kubernetes.io/pod-name": "db-0",
        "apps.kubernetes.io/pod-index": "0", "controller-revision-hash": "db-7"}},
        "spec": {}}
    identity = identity_of(db)
    assert identity == Identity("data", {"app": "db"}, annotations={}, source="data/db-0")
    pod = probe_pod("abc", identity, {"type": "tcp"}, image=IMAGE, timeout=1)
    assert "serviceAccountName" not in pod["spec"]  # the namespace's default, as db's
