"""Records of workloads (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, CronJobs,
ReplicationControllers): their pod template, selector, images and rollout status."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.graph.model.core_records import container_ports, mesh_proxy
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.field_values import as_dict, kept_annotations, optional_str
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import EMPTY_MAP, Rollout, WorkloadRecord
from netsight.graph.model.selectors import LabelSelector, parse_label_selector, shared_labels


def workload_record(
    raw: Mapping[str, Any], base: dict[str, Any], spec: dict[str, Any]
) -> WorkloadRecord:
    path = "spec"
    if base["kind"] == Kind.CRON_JOB:
        spec = as_dict(as_dict(spec.get("jobTemplate"), "spec.jobTemplate").get("spec"),
                        "spec.jobTemplate.spec")
        path = "spec.jobTemplate.spec"
    template = as_dict(spec.get("template"), f"{path}.template")
    tmeta = as_dict(template.get("metadata"), f"{path}.template.metadata")
    tspec = as_dict(template.get("spec"), f"{path}.template.spec")
    raw_selector = spec.get("selector")
    selector: LabelSelector | None = None
    if raw_selector is not None:
        if base["kind"] == Kind.REPLICATION_CONTROLLER:
            selector = parse_label_selector(
                {"matchLabels": raw_selector}, f"{path}.selector"
            )
        else:
            selector = parse_label_selector(raw_selector, f"{path}.selector")
    replicas = spec.get("replicas")
    if replicas is not None and (not isinstance(replicas, int) or isinstance(replicas, bool)):
        raise MalformedObject(f"{path}.replicas", "must be an integer")
    return WorkloadRecord(
        **base,
        pod_labels=shared_labels(tmeta.get("labels"), f"{path}.template.metadata.labels")
        or EMPTY_MAP,
        ports=container_ports(tspec, f"{path}.template.spec"),
        selector=selector,
        replicas=replicas,
        service_name=optional_str(spec.get("serviceName"), f"{path}.serviceName"),
        host_network=tspec.get("hostNetwork") is True,
        service_account=optional_str(tspec.get("serviceAccountName"),
                                      f"{path}.template.spec.serviceAccountName") or "default",
        pod_annotations=kept_annotations(tmeta.get("annotations")),
        mesh_proxy=mesh_proxy(tspec),
        images=_images(tspec),
        rollout=_rollout(base["kind"], raw, spec),
    )


def _images(spec: Mapping[str, Any]) -> tuple[str, ...]:
    containers = spec.get("containers")
    if not isinstance(containers, list):
        return ()
    return tuple(c["image"] for c in containers
                 if isinstance(c, dict) and isinstance(c.get("image"), str))


# The status fields of each controller kind: (desired, ready, updated, available); a
# Deployment's desired count is its spec.replicas (default 1).
_ROLLOUT_FIELDS: dict[str, tuple[str, str, str, str]] = {
    Kind.DAEMON_SET: ("desiredNumberScheduled", "numberReady", "updatedNumberScheduled",
                      "numberAvailable"),
    Kind.DEPLOYMENT: ("", "readyReplicas", "updatedReplicas", "availableReplicas"),
    Kind.STATEFUL_SET: ("", "readyReplicas", "updatedReplicas", "availableReplicas"),
}


def _rollout(kind: str, raw: Mapping[str, Any], spec: Mapping[str, Any]) -> Rollout | None:
    status, fields = raw.get("status"), _ROLLOUT_FIELDS.get(kind)
    if not isinstance(status, dict) or fields is None:
        return None

    def count(value: Any) -> int | None:
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    desired_field, ready, updated, available = fields
    # Absent counts are zero: the API server omits zero-valued status fields.
    desired = count(status.get(desired_field, 0)) if desired_field else \
        count(spec.get("replicas", 1))
    generation = count((raw.get("metadata") or {}).get("generation"))
    observed = count(status.get("observedGeneration"))
    return Rollout(desired=desired, ready=count(status.get(ready, 0)),
                   updated=count(status.get(updated, 0)),
                   available=count(status.get(available, 0)),
                   observed=None if generation is None or observed is None
                   else observed >= generation)
