"""Seeded synthetic clusters: raw API objects at any scale, for benchmarks, tests and the sim.

:func:`generate` returns the objects a real cluster's API server would return for a chosen
number of pods: Namespaces; Deployments with their ReplicaSets and Pods; Services selecting
those pods; the EndpointSlices the endpointslice controller would write for them;
NetworkPolicies; Ingresses and their IngressClass. The objects carry the noise real ones do
(managedFields, ``last-applied-configuration``, images, env, resources, probes), so the cost
of parsing them and of dropping what analysis never reads is measured honestly.

The same seed always gives the same objects, byte for byte. Objects of one ReplicaSet share
their unchanging nested parts (container specs, tolerations, volumes, managedFields field
sets) to keep a 100k-pod cluster fast to build and small in memory: treat the objects as
read-only, or ``copy.deepcopy`` one before changing it.

Addressing follows a kubeadm-style cluster: node IPs in 172.16.0.0/12, one /24 pod CIDR per
node inside 10.64.0.0/11 (so pod IPs are unique within 10.0.0.0/8), Service IPs in
10.96.0.0/12, NodePorts in 30000-32767.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from netsight.graph.runtime.collector import paused_gc

RawObject = dict[str, Any]

# k8s.io/apimachinery/pkg/util/rand: no vowels and no look-alike characters, so generated
# names never spell words.
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_EPOCH = 1_714_521_600  # 2024-05-01T00:00:00Z
_MAX_PODS_PER_NODE = 110  # the kubelet's default --max-pods
_POD_CIDR_BASE = (10 << 24) | (64 << 16)  # 10.64.0.0/11: one /24 per node
_MAX_NODES = 1 << 13  # /24s in a /11
_NODE_IP_BASE = (172 << 24) | (16 << 16)  # 172.16.0.0/12
_SERVICE_IP_BASE = (10 << 24) | (96 << 16)  # 10.96.0.0/12
_SERVICE_IP_COUNT = 1 << 20
_NODE_PORTS = range(30000, 32768)
_ZONES = ("zone-a", "zone-b", "zone-c")
_SLICE_CONTROLLER = "endpointslice-controller.k8s.io"
_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

_NAMESPACE_WORDS = (
    "payments", "checkout", "catalog", "search", "identity", "shipping", "billing",
    "analytics", "notifications", "inventory", "reviews", "recommendations", "ads", "media",
    "support", "loyalty", "pricing", "fraud", "ledger", "reporting",
)
_TEAMS = ("commerce", "platform", "growth", "data")

# tier -> component names; a namespace draws its Deployments from these.
_COMPONENTS: dict[str, tuple[str, ...]] = {
    "frontend": ("web", "storefront", "portal", "gateway", "ui"),
    "backend": ("api", "orders", "users", "auth", "search", "cart", "pricing", "quotes",
                "accounts", "profiles", "sessions", "tokens", "ratings", "stock"),
    "worker": ("worker", "mailer", "indexer", "scheduler", "exporter"),
    "cache": ("redis", "memcached"),
    "db": ("postgres", "mysql"),
}
_TIER_WEIGHTS = (("frontend", 2), ("backend", 6), ("worker", 2), ("cache", 1), ("db", 1))
_TIERS = tuple(tier for tier, weight in _TIER_WEIGHTS for _ in range(weight))
_REPLICAS: dict[str, tuple[int, ...]] = {
    "frontend": (2, 3, 3, 5, 8, 12, 20),
    "backend": (1, 2, 2, 3, 3, 5, 8, 12),
    "worker": (1, 2, 4, 10),
    "cache": (1, 3),
    "db": (1, 3),
}
_LARGE_DEPLOYMENT_FRACTION = 0.02  # 120-250 replicas: their Services need several slices


@dataclass(frozen=True, slots=True)
class _Port:
    name: str
    number: int
    protocol: str = "TCP"


def _app_ports(tier: str, component: str, rng: random.Random) -> tuple[_Port, ...]:
    """Container ports of the main container, by what the component is."""
    if tier == "db":
        return (_Port("postgres", 5432),) if component == "postgres" else (_Port("mysql", 3306),)
    if tier == "cache":
        if component == "redis":
            return (_Port("redis", 6379),)
        return (_Port("memcache", 11211), _Port("memcache-udp", 11211, "UDP"))
    ports = [_Port("http", 8080)]
    if tier == "backend" and rng.random() < 0.3:
        ports.append(_Port("grpc", 9000))
    if rng.random() < 0.7:
        ports.append(_Port("metrics", 9090))
    if tier == "worker" and rng.random() < 0.5:
        ports = ports[1:] or [_Port("metrics", 9090)]  # a worker serves no HTTP traffic
    return tuple(ports)


@dataclass(slots=True)
class SyntheticCluster:
    """The generated objects, by kind; :meth:`objects` yields them all in load order."""

    seed: int
    namespaces: list[RawObject] = field(default_factory=list)
    ingress_classes: list[RawObject] = field(default_factory=list)
    deployments: list[RawObject] = field(default_factory=list)
    replica_sets: list[RawObject] = field(default_factory=list)
    pods: list[RawObject] = field(default_factory=list)
    services: list[RawObject] = field(default_factory=list)
    endpoint_slices: list[RawObject] = field(default_factory=list)
    network_policies: list[RawObject] = field(default_factory=list)
    ingresses: list[RawObject] = field(default_factory=list)

    def _groups(self) -> tuple[list[RawObject], ...]:
        return (
            self.namespaces, self.ingress_classes, self.deployments, self.replica_sets,
            self.pods, self.services, self.endpoint_slices, self.network_policies,
            self.ingresses,
        )

    def objects(self) -> Iterator[RawObject]:
        for group in self._groups():
            yield from group

    def __len__(self) -> int:
        return sum(len(group) for group in self._groups())

    def counts(self) -> dict[str, int]:
        """Objects per kind."""
        return {group[0]["kind"]: len(group) for group in self._groups() if group}

    def to_json(self) -> bytes:
        """One ``v1 List`` holding every object, compact, as ``kubectl get -o json`` shapes it."""
        return orjson.dumps(
            {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""},
             "items": list(self.objects())}
        )

    def write_json(self, path: str | Path) -> Path:
        target = Path(path)
        target.write_bytes(self.to_json())
        return target

    def write_yaml(self, path: str | Path) -> Path:
        """Every object as one document of a multi-document YAML stream."""
        target = Path(path)
        with target.open("w", encoding="utf-8") as stream:
            for index, obj in enumerate(self.objects()):
                if index:
                    stream.write("---\n")
                stream.write(to_yaml(obj))
        return target


def to_yaml(obj: RawObject) -> str:
    """One object as block-style YAML, the way ``kubectl get -o yaml`` lays it out.

    PyYAML's dumper is far too slow for clusters of this size; this writer handles only
    what API objects hold (maps with string keys, lists, strings, integers, booleans, null)
    and quotes any string YAML 1.1 could read as something else.
    """
    lines: list[str] = []
    _yaml_map(obj, "", lines)
    lines.append("")
    return "\n".join(lines)


# A string is written plain only if it starts with a letter and holds nothing YAML treats
# specially; anything else (numbers, timestamps, IPs, "f:spec", JSON) is double-quoted.
_PLAIN = re.compile(r"[A-Za-z_][A-Za-z0-9_./ -]*[A-Za-z0-9_./-]|[A-Za-z_]")
_YAML_WORDS = frozenset(
    w for word in ("yes", "no", "true", "false", "on", "off", "null")
    for w in (word, word.capitalize(), word.upper())
)


def _yaml_scalar(value: object) -> str:
    if isinstance(value, str):
        if _PLAIN.fullmatch(value) and value not in _YAML_WORDS:
            return value
        return orjson.dumps(value).decode()
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        return "{}"  # only empty maps and lists reach here
    if isinstance(value, list):
        return "[]"
    raise TypeError(f"cannot write {type(value).__name__} as YAML")


def _yaml_map(value: dict[str, Any], indent: str, lines: list[str]) -> None:
    for key, item in value.items():
        label = _yaml_scalar(key)
        if isinstance(item, dict) and item:
            lines.append(f"{indent}{label}:")
            _yaml_map(item, indent + "  ", lines)
        elif isinstance(item, list) and item:
            lines.append(f"{indent}{label}:")
            _yaml_list(item, indent, lines)
        else:
            lines.append(f"{indent}{label}: {_yaml_scalar(item)}")


def _yaml_list(value: list[Any], indent: str, lines: list[str]) -> None:
    inner = indent + "  "
    for item in value:
        if isinstance(item, dict) and item:
            first = len(lines)
            _yaml_map(item, inner, lines)
            lines[first] = f"{indent}- {lines[first][len(inner):]}"
        elif isinstance(item, list) and item:
            lines.append(f"{indent}-")
            _yaml_list(item, inner, lines)
        else:
            lines.append(f"{indent}- {_yaml_scalar(item)}")


def generate(
    *,
    pods: int = 10_000,
    seed: int = 1,
    namespaces: int | None = None,
    not_ready_fraction: float = 0.03,
    old_replica_set_fraction: float = 0.3,
    max_endpoints_per_slice: int = 100,
    policies_per_namespace: int | None = None,
) -> SyntheticCluster:
    """A cluster with exactly ``pods`` Pods, spread over ``namespaces`` namespaces.

    ``namespaces`` defaults to one per 400 pods. ``not_ready_fraction`` of the pods fail
    their readiness probe; ``old_replica_set_fraction`` of the Deployments keep the
    ReplicaSet of their previous rollout, scaled to zero.

    ``policies_per_namespace`` tops every namespace up to at least that many
    NetworkPolicies (about 18 a namespace come by default) with per-app allow rules, the
    microsegmentation some clusters run: ``allow-<client>-to-<server>`` (ingress to one
    app's pods from another's, on its ports) and ``<client>-egress-to-<server>``. They are
    generated after everything else, so the rest of the cluster is the same as without
    them; at 100k pods, 40 a namespace gives 10,000 policies.
    """
    if pods < 1:
        raise ValueError("pods must be at least 1")
    if namespaces is None:
        namespaces = max(1, round(pods / 400))
    if not 1 <= namespaces <= pods:
        raise ValueError("namespaces must be between 1 and pods")
    if not 1 <= max_endpoints_per_slice <= 1000:
        raise ValueError("max_endpoints_per_slice must be between 1 and 1000")
    if policies_per_namespace is not None and policies_per_namespace < 0:
        raise ValueError("policies_per_namespace must not be negative")
    # The objects are acyclic trees, freed by reference counting; left on, the cycle
    # collector rescans the growing heap again and again.
    with paused_gc():
        builder = _Builder(
            seed=seed, pods=pods, not_ready_fraction=not_ready_fraction,
            old_replica_set_fraction=old_replica_set_fraction,
            max_endpoints_per_slice=max_endpoints_per_slice,
            policies_per_namespace=policies_per_namespace,
        )
        return builder.build(namespaces)


def _timestamp(seconds: int) -> str:
    """RFC 3339 in UTC, as the API server writes metadata.creationTimestamp."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _ipv4(value: int) -> str:
    return f"{value >> 24}.{(value >> 16) & 255}.{(value >> 8) & 255}.{value & 255}"


@dataclass(slots=True)
class _Node:
    name: str
    ip: str
    zone: str
    cidr_base: int
    ips: list[RawObject]  # status.hostIPs, the same for every pod on the node
    pods: int = 0


@dataclass(slots=True)
class _App:
    """One Deployment as the builder tracks it, for its Service, slices and policies."""

    name: str
    tier: str
    ports: tuple[_Port, ...]
    pods: list[RawObject]
    ready: list[bool]
    nodes: list[_Node]


class _Builder:
    def __init__(
        self, *, seed: int, pods: int, not_ready_fraction: float,
        old_replica_set_fraction: float, max_endpoints_per_slice: int,
        policies_per_namespace: int | None = None,
    ) -> None:
        self.rng = random.Random(seed)
        self.cluster = SyntheticCluster(seed=seed)
        self.pod_total = pods
        self.not_ready_fraction = not_ready_fraction
        self.old_rs_fraction = old_replica_set_fraction
        self.slice_size = max_endpoints_per_slice
        self.policies_per_namespace = policies_per_namespace
        # (namespace, its apps, its policy names), for the policies added after the rest.
        self.policy_plan: list[tuple[str, list[_App], set[str]]] = []
        self.resource_version = 100_000
        self.clock = _EPOCH
        node_count = min(_MAX_NODES, max(3, -(-pods // 60)))
        if pods > node_count * _MAX_PODS_PER_NODE:
            raise ValueError(f"at most {_MAX_NODES * _MAX_PODS_PER_NODE} pods fit the pod CIDR")
        self.nodes = [
            _Node(
                name=f"worker-{i:04d}",
                ip=_ipv4(_NODE_IP_BASE + 10 + i),
                zone=_ZONES[i % len(_ZONES)],
                cidr_base=_POD_CIDR_BASE + (i << 8),
                ips=[{"ip": _ipv4(_NODE_IP_BASE + 10 + i)}],
            )
            for i in range(node_count)
        ]
        # Every Service gets a distinct address; there are never more Services than pods.
        self.service_ips = iter(self.rng.sample(range(10, _SERVICE_IP_COUNT - 1),
                                                k=min(pods, _SERVICE_IP_COUNT - 12)))
        self.node_ports = list(_NODE_PORTS)
        self.rng.shuffle(self.node_ports)

    # --- small helpers -------------------------------------------------------------------

    def uid(self) -> str:
        h = f"{self.rng.getrandbits(128):032x}"
        return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"

    def suffix(self, length: int) -> str:
        return "".join(self.rng.choices(_ALPHABET, k=length))

    def version(self) -> str:
        self.resource_version += 1
        return str(self.resource_version)

    def tick(self, most: int = 30) -> str:
        self.clock += self.rng.randint(1, most)
        return _timestamp(self.clock)

    def metadata(
        self, name: str, namespace: str | None, *, labels: dict[str, str],
        created: str, annotations: dict[str, str] | None = None,
        owner: RawObject | None = None, managed: list[RawObject] | None = None,
        generate_name: str | None = None, generation: int | None = None,
    ) -> RawObject:
        meta: RawObject = {"name": name}
        if generate_name:
            meta["generateName"] = generate_name
        if namespace is not None:
            meta["namespace"] = namespace
        meta["uid"] = self.uid()
        meta["resourceVersion"] = self.version()
        if generation is not None:
            meta["generation"] = generation
        meta["creationTimestamp"] = created
        meta["labels"] = labels
        if annotations:
            meta["annotations"] = annotations
        if owner is not None:
            meta["ownerReferences"] = [_owner_reference(owner)]
        if managed:
            meta["managedFields"] = managed
        return meta

    def next_service_ip(self) -> str:
        return _ipv4(_SERVICE_IP_BASE + next(self.service_ips))

    # --- the cluster ---------------------------------------------------------------------

    def build(self, namespace_count: int) -> SyntheticCluster:
        self.cluster.ingress_classes.append(self.ingress_class())
        share, extra = divmod(self.pod_total, namespace_count)
        for index in range(namespace_count):
            self.namespace(index, share + (index < extra))
        if self.policies_per_namespace:
            for ns, apps, names in self.policy_plan:
                self.extra_policies(ns, apps, names, self.policies_per_namespace)
        self.policy_plan.clear()
        return self.cluster

    def namespace(self, index: int, pod_count: int) -> None:
        word = _NAMESPACE_WORDS[index % len(_NAMESPACE_WORDS)]
        round_ = index // len(_NAMESPACE_WORDS)
        name = word if round_ == 0 else f"{word}-{round_ + 1}"
        team = _TEAMS[index % len(_TEAMS)]
        created = self.tick(3600)
        labels = {"kubernetes.io/metadata.name": name, "team": team,
                  "env": "staging" if index % 5 == 4 else "prod"}
        self.cluster.namespaces.append({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": self.metadata(
                name, None, labels=labels, created=created,
                managed=[_managed("kubectl-create", created, _fields_of(labels))],
            ),
            "spec": {"finalizers": ["kubernetes"]},
            "status": {"phase": "Active"},
        })
        apps: list[_App] = []
        taken: dict[str, int] = {}
        remaining = pod_count
        while remaining:
            tier = self.rng.choice(_TIERS)
            component = self.rng.choice(_COMPONENTS[tier])
            taken[component] = taken.get(component, 0) + 1
            app_name = component if taken[component] == 1 else f"{component}-{taken[component]}"
            if tier in ("frontend", "backend") and self.rng.random() < _LARGE_DEPLOYMENT_FRACTION:
                replicas = self.rng.randint(120, 250)
            else:
                replicas = self.rng.choice(_REPLICAS[tier])
            replicas = min(replicas, remaining)
            remaining -= replicas
            apps.append(self.deployment(name, app_name, tier, component, replicas))
        services = {
            app.name: self.service(name, app)
            for app in apps
            if app.tier != "worker" or self.rng.random() < 0.5
        }
        self.policies(name, team, apps)
        self.ingress(name, apps, services)

    def deployment(
        self, ns: str, name: str, tier: str, component: str, replicas: int
    ) -> _App:
        rng = self.rng
        ports = _app_ports(tier, component, rng)
        revision = 2 if rng.random() < self.old_rs_fraction else 1
        created = self.tick()
        labels = {"app": name, "tier": tier}
        image = f"registry.example.com/{ns}/{component}"
        template = self.pod_template(name, tier, image, f"v{revision}", ports)
        spec: RawObject = {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template,
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}},
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
        }
        applied = {"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"annotations": {}, "labels": labels, "name": name,
                                "namespace": ns},
                   "spec": spec}
        deployment: RawObject = {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": self.metadata(
                name, ns, labels=labels, created=created,
                annotations={"deployment.kubernetes.io/revision": str(revision),
                             _LAST_APPLIED: orjson.dumps(applied).decode() + "\n"},
                generation=revision,
                managed=[
                    _managed("kubectl-client-side-apply", created, _DEPLOYMENT_APPLY_FIELDS,
                             api_version="apps/v1"),
                    _managed("kube-controller-manager", created, _DEPLOYMENT_STATUS_FIELDS,
                             api_version="apps/v1", subresource="status"),
                ],
            ),
            "spec": spec,
        }
        self.cluster.deployments.append(deployment)
        if revision == 2:
            old = self.pod_template(name, tier, image, "v1", ports)
            self.replica_set(ns, deployment, old, 0, 1)
        current = self.replica_set(ns, deployment, template, replicas, revision)
        app = _App(name, tier, ports, [], [], [])
        self.pods_of(ns, current, app, replicas)
        not_ready = app.ready.count(False)
        current["status"]["readyReplicas"] = current["status"]["availableReplicas"] = (
            replicas - not_ready
        )
        # maxUnavailable 25%: the Deployment stays Available while enough replicas are ready.
        available = not_ready <= replicas // 4
        deployment["status"] = {
            "observedGeneration": revision,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas - not_ready,
            "availableReplicas": replicas - not_ready,
            **({"unavailableReplicas": not_ready} if not_ready else {}),
            "conditions": [
                _condition("Available", "True" if available else "False", created,
                           reason="MinimumReplicasAvailable" if available
                           else "MinimumReplicasUnavailable"),
                _condition("Progressing", "True", created,
                           reason="NewReplicaSetAvailable"),
            ],
        }
        return app

    def pod_template(
        self, app: str, tier: str, image: str, version: str, ports: tuple[_Port, ...]
    ) -> RawObject:
        rng = self.rng
        containers: list[RawObject] = [_container(app, f"{image}:{version}.{rng.randint(0, 9)}",
                                                  ports, rng)]
        if rng.random() < 0.2:
            containers.append(_SIDECAR)
        annotations: dict[str, str] = {}
        if any(p.name == "metrics" for p in ports):
            annotations = {"prometheus.io/scrape": "true", "prometheus.io/port": "9090"}
        if rng.random() < 0.1:
            annotations["kubectl.kubernetes.io/restartedAt"] = self.tick()
        meta: RawObject = {"labels": {"app": app, "version": version, "tier": tier}}
        if annotations:
            meta["annotations"] = annotations
        return {
            "metadata": meta,
            "spec": {
                "containers": containers,
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "serviceAccountName": app if rng.random() < 0.5 else "default",
                "securityContext": {"runAsNonRoot": True, "fsGroup": 2000},
                "schedulerName": "default-scheduler",
            },
        }

    def replica_set(
        self, ns: str, deployment: RawObject, template: RawObject, replicas: int, revision: int
    ) -> RawObject:
        app = deployment["metadata"]["name"]
        pod_hash = self.suffix(10)
        labels = {**template["metadata"]["labels"], "pod-template-hash": pod_hash}
        template = {**template, "metadata": {**template["metadata"], "labels": labels}}
        created = self.tick()
        rs: RawObject = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": self.metadata(
                f"{app}-{pod_hash}", ns, labels=labels, created=created,
                annotations={"deployment.kubernetes.io/desired-replicas": str(replicas),
                             "deployment.kubernetes.io/max-replicas": str(replicas + 1),
                             "deployment.kubernetes.io/revision": str(revision)},
                owner=deployment,
                generation=1,
                managed=[_managed("kube-controller-manager", created, _RS_FIELDS,
                                  api_version="apps/v1")],
            ),
            "spec": {
                "replicas": replicas,
                "selector": {"matchLabels": {"app": app, "pod-template-hash": pod_hash}},
                "template": template,
            },
            "status": {"replicas": replicas, "fullyLabeledReplicas": replicas,
                       "readyReplicas": replicas, "availableReplicas": replicas,
                       "observedGeneration": 1},
        }
        self.cluster.replica_sets.append(rs)
        return rs

    def pods_of(self, ns: str, rs: RawObject, app: _App, replicas: int) -> None:
        rng, nodes = self.rng, self.nodes
        rs_meta = rs["metadata"]
        template = rs["spec"]["template"]
        tmeta, tspec = template["metadata"], template["spec"]
        labels, annotations = tmeta["labels"], tmeta.get("annotations")
        prefix = f"{rs_meta['name']}-"
        owner = [_owner_reference(rs)]
        containers = tspec["containers"]
        volumes = [_token_volume(self.suffix(5))]
        spec_rest = {k: v for k, v in tspec.items() if k != "containers"}
        controller_fields = _pod_controller_fields(labels, rs_meta["uid"], containers)
        # The ReplicaSet creates its pods in one burst: they share timestamps, so pods in the
        # same state share their conditions, as they would compare equal in the API.
        created = self.tick()
        started = _timestamp(self.clock + 2)
        conditions = {ready: _pod_conditions(ready, created, started) for ready in (True, False)}
        image_ids = {c["name"]: f"{c['image'].partition(':')[0]}@sha256:"
                                f"{rng.getrandbits(256):064x}" for c in containers}
        letters = rng.choices(_ALPHABET, k=5 * replicas)
        names: set[str] = set()
        for index in range(replicas):
            name = prefix + "".join(letters[5 * index:5 * index + 5])
            while name in names:
                name = prefix + self.suffix(5)
            names.add(name)
            at = rng.randrange(len(nodes))
            while nodes[at].pods >= _MAX_PODS_PER_NODE:
                at = (at + 1) % len(nodes)
            node = nodes[at]
            node.pods += 1
            ip = _ipv4(node.cidr_base + 1 + node.pods)
            ready = rng.random() >= self.not_ready_fraction
            pod: RawObject = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    "name": name,
                    "generateName": prefix,
                    "namespace": ns,
                    "uid": self.uid(),
                    "resourceVersion": self.version(),
                    "creationTimestamp": created,
                    "labels": dict(labels),
                    **({"annotations": dict(annotations)} if annotations else {}),
                    "ownerReferences": owner,
                    "managedFields": [
                        _managed("kube-controller-manager", created, controller_fields),
                        _managed("kubelet", started, _pod_status_fields(ip),
                                 subresource="status"),
                    ],
                },
                "spec": {
                    "volumes": volumes,
                    "containers": containers,
                    **spec_rest,
                    "nodeName": node.name,
                    "tolerations": _TOLERATIONS,
                    "enableServiceLinks": True,
                    "preemptionPolicy": "PreemptLowerPriority",
                    "priority": 0,
                },
                "status": {
                    "phase": "Running",
                    "conditions": conditions[ready],
                    "hostIP": node.ip,
                    "hostIPs": node.ips,
                    "podIP": ip,
                    "podIPs": [{"ip": ip}],
                    "startTime": created,
                    "containerStatuses": [
                        self.container_status(c, image_ids[c["name"]], started, ready)
                        for c in containers
                    ],
                    "qosClass": "Burstable",
                },
            }
            app.pods.append(pod)
            app.ready.append(ready)
            app.nodes.append(node)
        self.cluster.pods.extend(app.pods)

    def container_status(
        self, container: RawObject, image_id: str, started: str, ready: bool
    ) -> RawObject:
        # A sidecar keeps running while the main container crash-loops.
        ok = ready or container is _SIDECAR
        status: RawObject = {"name": container["name"]}
        if ok:
            status["state"] = {"running": {"startedAt": started}}
            status["lastState"] = {}
        else:
            status["state"] = {"waiting": {
                "reason": "CrashLoopBackOff",
                "message": "back-off 5m0s restarting failed container"}}
            status["lastState"] = {"terminated": {
                "exitCode": 1, "reason": "Error", "startedAt": started, "finishedAt": started}}
        status["ready"] = ok
        status["restartCount"] = 0 if ok else self.rng.randint(3, 40)
        status["image"] = container["image"]
        status["imageID"] = image_id
        status["containerID"] = f"containerd://{self.rng.getrandbits(256):064x}"
        status["started"] = ok
        return status

    def service(self, ns: str, app: _App) -> RawObject:
        rng = self.rng
        ports: list[RawObject] = []
        for port in app.ports:
            if port.name == "http":
                number, target = 80, ("http" if rng.random() < 0.6 else port.number)
            else:
                number = port.number
                target = port.name if rng.random() < 0.5 else port.number
            ports.append({"name": port.name, "port": number, "protocol": port.protocol,
                          "targetPort": target})
        if len(ports) == 1 and rng.random() < 0.5:
            del ports[0]["name"]  # a single port may go unnamed
        kind_roll = rng.random()
        headless = app.tier == "db" and kind_roll < 0.5
        svc_type = "ClusterIP"
        if not headless and kind_roll > 0.97 and self.node_ports:
            svc_type = "NodePort" if app.tier != "frontend" else "LoadBalancer"
            for entry in ports:
                if self.node_ports:
                    entry["nodePort"] = self.node_ports.pop()
        selector = {"app": app.name}
        if rng.random() < 0.3:
            selector["tier"] = app.tier
        labels = {"app": app.name, "tier": app.tier}
        created = self.tick()
        cluster_ip = "None" if headless else self.next_service_ip()
        spec: RawObject = {
            "ports": ports,
            "selector": selector,
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "type": svc_type,
            "sessionAffinity": "None",
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "internalTrafficPolicy": "Cluster",
        }
        if svc_type != "ClusterIP":
            spec["externalTrafficPolicy"] = "Cluster"
        applied = {"apiVersion": "v1", "kind": "Service",
                   "metadata": {"annotations": {}, "labels": labels, "name": app.name,
                                "namespace": ns},
                   "spec": {"ports": ports, "selector": selector}}
        status: RawObject = {"loadBalancer": {}}
        if svc_type == "LoadBalancer":
            status = {"loadBalancer": {"ingress": [
                {"ip": _ipv4((203 << 24) | (113 << 8) | rng.randint(1, 254)), "ipMode": "VIP"}
            ]}}
        service: RawObject = {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": self.metadata(
                app.name, ns, labels=labels, created=created,
                annotations={_LAST_APPLIED: orjson.dumps(applied).decode() + "\n"},
                managed=[_managed("kubectl-client-side-apply", created, _SERVICE_FIELDS)],
            ),
            "spec": spec,
            "status": status,
        }
        self.cluster.services.append(service)
        self.endpoint_slices(ns, service, app)
        return service

    def endpoint_slices(self, ns: str, service: RawObject, app: _App) -> None:
        """What the endpointslice controller writes: ≤ slice_size endpoints per slice."""
        svc_name = service["metadata"]["name"]
        by_name = {p.name: p for p in app.ports}
        slice_ports = []
        for entry in service["spec"]["ports"]:
            target = entry["targetPort"]
            number = by_name[target].number if isinstance(target, str) else target
            slice_port: RawObject = {"port": number, "protocol": entry["protocol"]}
            slice_port["name"] = entry.get("name", "")
            slice_ports.append(slice_port)
        labels = {**service["metadata"]["labels"],
                  "endpointslice.kubernetes.io/managed-by": _SLICE_CONTROLLER,
                  "kubernetes.io/service-name": svc_name}
        if service["spec"]["clusterIP"] == "None":
            labels["service.kubernetes.io/headless"] = ""
        endpoints = [
            {
                "addresses": [pod["status"]["podIP"]],
                "conditions": {"ready": ready, "serving": ready, "terminating": False},
                "targetRef": {"kind": "Pod", "namespace": ns,
                              "name": pod["metadata"]["name"], "uid": pod["metadata"]["uid"]},
                "nodeName": node.name,
                "zone": node.zone,
            }
            for pod, ready, node in zip(app.pods, app.ready, app.nodes, strict=True)
        ]
        created = self.tick()
        names: set[str] = set()
        for start in range(0, max(len(endpoints), 1), self.slice_size):
            name = f"{svc_name}-{self.suffix(5)}"
            while name in names:
                name = f"{svc_name}-{self.suffix(5)}"
            names.add(name)
            self.cluster.endpoint_slices.append({
                "apiVersion": "discovery.k8s.io/v1",
                "kind": "EndpointSlice",
                "metadata": self.metadata(
                    name, ns, labels=dict(labels), created=created, generate_name=f"{svc_name}-",
                    annotations={"endpoints.kubernetes.io/last-change-trigger-time": created},
                    owner=service,
                    managed=[_managed("kube-controller-manager", created, _SLICE_FIELDS,
                                      api_version="discovery.k8s.io/v1")],
                ),
                "addressType": "IPv4",
                "endpoints": endpoints[start:start + self.slice_size],
                "ports": slice_ports,
            })

    def policies(self, ns: str, team: str, apps: Sequence[_App]) -> None:
        """Default deny, same-namespace, monitoring, team and DNS rules; more for some."""
        rng = self.rng
        tiers = sorted({app.tier for app in apps})
        found: list[tuple[str, RawObject]] = [
            ("default-deny-ingress", {"podSelector": {}, "policyTypes": ["Ingress"]}),
            ("allow-same-namespace", {
                "podSelector": {},
                "ingress": [{"from": [{"podSelector": {}}]}],
                "policyTypes": ["Ingress"],
            }),
            ("allow-from-monitoring", {
                "podSelector": {"matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["backend", "frontend", "worker"]}
                ]},
                "ingress": [{
                    "from": [{"namespaceSelector": {"matchLabels": {
                        "kubernetes.io/metadata.name": "monitoring"}}}],
                    "ports": [{"port": "metrics", "protocol": "TCP"}],
                }],
                "policyTypes": ["Ingress"],
            }),
            ("allow-from-team", {
                "podSelector": {"matchLabels": {"tier": "backend"}},
                "ingress": [{"from": [{
                    "namespaceSelector": {"matchLabels": {"team": team}},
                    "podSelector": {"matchExpressions": [
                        {"key": "tier", "operator": "NotIn", "values": ["db", "cache"]}]},
                }]}],
                "policyTypes": ["Ingress"],
            }),
            ("allow-dns-egress", {
                "podSelector": {},
                "egress": [{
                    "to": [{
                        "namespaceSelector": {"matchLabels": {
                            "kubernetes.io/metadata.name": "kube-system"}},
                        "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                    }],
                    "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}],
                }],
                "policyTypes": ["Egress"],
            }),
        ]
        if rng.random() < 0.4:
            found.append(("default-deny-egress", {"podSelector": {}, "policyTypes": ["Egress"]}))
            found.append(("allow-egress-internal", {
                "podSelector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]},
                "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/8"}}]}],
                "policyTypes": ["Egress"],
            }))
        if "frontend" in tiers:
            found.append(("allow-internet-to-frontend", {
                "podSelector": {"matchLabels": {"tier": "frontend"}},
                "ingress": [{
                    "from": [{"ipBlock": {"cidr": "0.0.0.0/0",
                                          "except": ["169.254.169.254/32", "10.0.0.0/8"]}}],
                    "ports": [{"port": 8080, "protocol": "TCP"}],
                }],
                "policyTypes": ["Ingress"],
            }))
        for app in apps:
            if app.tier in ("db", "cache"):
                found.append((f"{app.name}-allow-clients", {
                    "podSelector": {"matchLabels": {"app": app.name}},
                    "ingress": [{
                        "from": [{"podSelector": {"matchExpressions": [
                            {"key": "tier", "operator": "In", "values": ["backend", "worker"]},
                            {"key": "quarantined", "operator": "DoesNotExist"},
                        ]}}],
                        "ports": [{"port": p.number, "protocol": p.protocol} for p in app.ports],
                    }],
                    "policyTypes": ["Ingress"],
                }))
        if self.policies_per_namespace:
            self.policy_plan.append((ns, list(apps), {name for name, _ in found}))
        self.add_policies(ns, found)

    def extra_policies(self, ns: str, apps: Sequence[_App], names: set[str],
                       wanted: int) -> None:
        """Per-app allow rules until ``ns`` holds ``wanted`` policies."""
        rng = self.rng
        servers = [app for app in apps if app.tier != "worker"] or list(apps)
        found: list[tuple[str, RawObject]] = []
        while len(names) < wanted:
            server, client = rng.choice(servers), rng.choice(apps)
            ports = [{"port": p.number, "protocol": p.protocol} for p in server.ports]
            if rng.random() < 0.7:
                name = f"allow-{client.name}-to-{server.name}"
                spec: RawObject = {
                    "podSelector": {"matchLabels": {"app": server.name}},
                    "ingress": [{"from": [{"podSelector": {"matchLabels": {
                        "app": client.name}}}], "ports": ports}],
                    "policyTypes": ["Ingress"],
                }
            else:
                name = f"{client.name}-egress-to-{server.name}"
                spec = {
                    "podSelector": {"matchLabels": {"app": client.name}},
                    "egress": [{"to": [{"podSelector": {"matchLabels": {
                        "app": server.name}}}], "ports": ports}],
                    "policyTypes": ["Egress"],
                }
            base, number = name, 2
            while name in names:  # a pair drawn twice, or a namespace of very few apps
                name, number = f"{base}-{number}", number + 1
            names.add(name)
            found.append((name, spec))
        self.add_policies(ns, found)

    def add_policies(self, ns: str, found: Sequence[tuple[str, RawObject]]) -> None:
        for name, spec in found:
            created = self.tick()
            labels = {"app.kubernetes.io/managed-by": "netsight-sim"}
            applied = {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                       "metadata": {"annotations": {}, "name": name, "namespace": ns},
                       "spec": spec}
            self.cluster.network_policies.append({
                "apiVersion": "networking.k8s.io/v1",
                "kind": "NetworkPolicy",
                "metadata": self.metadata(
                    name, ns, labels=labels, created=created,
                    annotations={_LAST_APPLIED: orjson.dumps(applied).decode() + "\n"},
                    generation=1,
                    managed=[_managed("kubectl-client-side-apply", created, _POLICY_FIELDS,
                                      api_version="networking.k8s.io/v1")],
                ),
                "spec": spec,
            })

    def ingress(self, ns: str, apps: Sequence[_App], services: dict[str, RawObject]) -> None:
        """One Ingress per namespace that has HTTP Services, routing a path to each."""
        routed = [
            app for app in apps
            if app.tier in ("frontend", "backend") and app.name in services
            and services[app.name]["spec"]["clusterIP"] != "None"
            and any(p.name == "http" for p in app.ports)
        ]
        if not routed:
            return
        host = f"{ns}.example.com"
        paths: list[RawObject] = []
        for app in routed[:20]:
            port: RawObject = {"name": "http"}
            if "name" not in services[app.name]["spec"]["ports"][0] or self.rng.random() < 0.5:
                port = {"number": 80}
            paths.append({
                "path": "/" if app.tier == "frontend" and not paths else f"/{app.name}",
                "pathType": "Prefix",
                "backend": {"service": {"name": app.name, "port": port}},
            })
        created = self.tick()
        self.cluster.ingresses.append({
            "apiVersion": "networking.k8s.io/v1",
            "kind": "Ingress",
            "metadata": self.metadata(
                f"{ns}-web", ns, labels={"app.kubernetes.io/part-of": ns}, created=created,
                annotations={"nginx.ingress.kubernetes.io/proxy-body-size": "8m",
                             "cert-manager.io/cluster-issuer": "letsencrypt"},
                managed=[_managed("kubectl-client-side-apply", created, _INGRESS_FIELDS,
                                  api_version="networking.k8s.io/v1")],
            ),
            "spec": {
                "ingressClassName": "nginx",
                "rules": [{"host": host, "http": {"paths": paths}}],
                "tls": [{"hosts": [host], "secretName": f"{ns}-tls"}],
            },
            "status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.10"}]}},
        })

    def ingress_class(self) -> RawObject:
        created = _timestamp(_EPOCH)
        return {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "IngressClass",
            "metadata": self.metadata(
                "nginx", None, labels={"app.kubernetes.io/name": "ingress-nginx"},
                created=created,
                annotations={"ingressclass.kubernetes.io/is-default-class": "true"},
            ),
            "spec": {"controller": "k8s.io/ingress-nginx"},
        }


# --- fixed parts -----------------------------------------------------------------------------


def _owner_reference(owner: RawObject) -> RawObject:
    meta = owner["metadata"]
    return {"apiVersion": owner["apiVersion"], "kind": owner["kind"], "name": meta["name"],
            "uid": meta["uid"], "controller": True, "blockOwnerDeletion": True}


def _condition(
    kind: str, status: str, when: str, *, reason: str | None = None
) -> RawObject:
    condition: RawObject = {"type": kind, "status": status, "lastProbeTime": None,
                            "lastTransitionTime": when}
    if reason:
        condition["reason"] = reason
    return condition


def _pod_conditions(ready: bool, created: str, started: str) -> list[RawObject]:
    status, reason = ("True", None) if ready else ("False", "ContainersNotReady")
    return [
        _condition("PodReadyToStartContainers", "True", started),
        _condition("Initialized", "True", created),
        _condition("Ready", status, started, reason=reason),
        _condition("ContainersReady", status, started, reason=reason),
        _condition("PodScheduled", "True", created),
    ]


def _managed(
    manager: str, when: str, fields: RawObject, *, api_version: str = "v1",
    subresource: str | None = None,
) -> RawObject:
    entry: RawObject = {"manager": manager, "operation": "Update", "apiVersion": api_version,
                        "time": when, "fieldsType": "FieldsV1", "fieldsV1": fields}
    if subresource:
        entry["subresource"] = subresource
    return entry


def _fields_of(labels: dict[str, str]) -> RawObject:
    return {"f:metadata": {"f:labels": {".": {}, **{f"f:{k}": {} for k in labels}}}}


def _container(app: str, image: str, ports: tuple[_Port, ...], rng: random.Random) -> RawObject:
    probe_port = ports[0].name
    cpu = rng.choice(("50m", "100m", "250m", "500m"))
    memory = rng.choice(("64Mi", "128Mi", "256Mi", "512Mi"))
    return {
        "name": app,
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": p.name, "containerPort": p.number, "protocol": p.protocol}
                  for p in ports],
        "env": [
            {"name": "LOG_LEVEL", "value": "info"},
            {"name": "APP_NAME", "value": app},
            {"name": "POD_NAME",
             "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
            {"name": "DATABASE_PASSWORD",
             "valueFrom": {"secretKeyRef": {"name": f"{app}-db", "key": "password"}}},
        ],
        "resources": {"requests": {"cpu": cpu, "memory": memory},
                      "limits": {"memory": memory}},
        "readinessProbe": {"tcpSocket": {"port": probe_port}, "periodSeconds": 10,
                           "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3},
        "volumeMounts": [{"name": "kube-api-access",
                          "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
                          "readOnly": True}],
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }


_SIDECAR: RawObject = {
    "name": "log-shipper",
    "image": "registry.example.com/platform/log-shipper:3.2.1",
    "imagePullPolicy": "IfNotPresent",
    "ports": [{"name": "shipper-admin", "containerPort": 2020, "protocol": "TCP"}],
    "resources": {"requests": {"cpu": "10m", "memory": "32Mi"}, "limits": {"memory": "64Mi"}},
    "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File",
}

_TOLERATIONS: list[RawObject] = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
     "tolerationSeconds": 300},
]


def _token_volume(suffix: str) -> RawObject:
    return {
        "name": "kube-api-access",
        "projected": {
            "defaultMode": 420,
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt",
                               "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
                    "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
        },
    }


def _pod_controller_fields(
    labels: dict[str, str], owner_uid: str, containers: list[RawObject]
) -> RawObject:
    return {
        "f:metadata": {
            "f:generateName": {},
            "f:labels": {".": {}, **{f"f:{k}": {} for k in labels}},
            "f:ownerReferences": {".": {}, f'k:{{"uid":"{owner_uid}"}}': {}},
        },
        "f:spec": {
            "f:containers": {
                f'k:{{"name":"{c["name"]}"}}': {
                    ".": {}, "f:image": {}, "f:imagePullPolicy": {}, "f:name": {},
                    "f:ports": {
                        f'k:{{"containerPort":{p["containerPort"]},"protocol":"{p["protocol"]}"}}':
                        {".": {}, "f:containerPort": {}, "f:name": {}, "f:protocol": {}}
                        for p in c.get("ports", ())
                    },
                    "f:resources": {".": {}, "f:limits": {}, "f:requests": {}},
                    "f:terminationMessagePath": {}, "f:terminationMessagePolicy": {},
                }
                for c in containers
            },
            "f:dnsPolicy": {}, "f:enableServiceLinks": {}, "f:restartPolicy": {},
            "f:schedulerName": {}, "f:securityContext": {},
            "f:terminationGracePeriodSeconds": {},
        },
    }


_POD_STATUS_FIELDS: RawObject = {
    "f:conditions": {
        f'k:{{"type":"{kind}"}}': {".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {},
                                   "f:status": {}, "f:type": {}}
        for kind in ("ContainersReady", "Initialized", "PodReadyToStartContainers", "Ready")
    },
    "f:containerStatuses": {}, "f:hostIP": {}, "f:hostIPs": {}, "f:phase": {},
    "f:podIP": {}, "f:startTime": {},
}


def _pod_status_fields(ip: str) -> RawObject:
    return {"f:status": {**_POD_STATUS_FIELDS,
                         "f:podIPs": {".": {}, f'k:{{"ip":"{ip}"}}': {".": {}, "f:ip": {}}}}}


_DEPLOYMENT_APPLY_FIELDS: RawObject = {
    "f:metadata": {"f:annotations": {".": {}, f"f:{_LAST_APPLIED}": {}},
                   "f:labels": {".": {}, "f:app": {}, "f:tier": {}}},
    "f:spec": {"f:progressDeadlineSeconds": {}, "f:replicas": {}, "f:revisionHistoryLimit": {},
               "f:selector": {}, "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {},
                                                                    "f:maxUnavailable": {}},
                                                "f:type": {}},
               "f:template": {"f:metadata": {"f:labels": {}}, "f:spec": {"f:containers": {}}}},
}
_DEPLOYMENT_STATUS_FIELDS: RawObject = {
    "f:metadata": {"f:annotations": {"f:deployment.kubernetes.io/revision": {}}},
    "f:status": {"f:availableReplicas": {}, "f:conditions": {".": {}},
                 "f:observedGeneration": {}, "f:readyReplicas": {}, "f:replicas": {},
                 "f:updatedReplicas": {}},
}
_RS_FIELDS: RawObject = {
    "f:metadata": {"f:annotations": {".": {}}, "f:labels": {".": {}},
                   "f:ownerReferences": {".": {}}},
    "f:spec": {"f:replicas": {}, "f:selector": {}, "f:template": {}},
}
_SERVICE_FIELDS: RawObject = {
    "f:metadata": {"f:annotations": {".": {}, f"f:{_LAST_APPLIED}": {}},
                   "f:labels": {".": {}, "f:app": {}, "f:tier": {}}},
    "f:spec": {"f:internalTrafficPolicy": {}, "f:ports": {".": {}}, "f:selector": {},
               "f:sessionAffinity": {}, "f:type": {}},
}
_SLICE_FIELDS: RawObject = {
    "f:addressType": {}, "f:endpoints": {},
    "f:metadata": {"f:annotations": {".": {}}, "f:generateName": {}, "f:labels": {".": {}},
                   "f:ownerReferences": {".": {}}},
    "f:ports": {},
}
_POLICY_FIELDS: RawObject = {
    "f:metadata": {"f:annotations": {".": {}, f"f:{_LAST_APPLIED}": {}}},
    "f:spec": {"f:ingress": {}, "f:egress": {}, "f:podSelector": {}, "f:policyTypes": {}},
}
_INGRESS_FIELDS: RawObject = {
    "f:metadata": {"f:annotations": {".": {}}},
    "f:spec": {"f:ingressClassName": {}, "f:rules": {}, "f:tls": {}},
}
