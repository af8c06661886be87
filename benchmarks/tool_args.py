"""Valid arguments for every registered tool, drawn from the live graph with a seeded RNG.

Each tool of ``netsight.analyzers.tools.TOOLS`` has a sampler here; a tool without one
fails the run (:func:`samplers`), so a new tool cannot silently go unmeasured.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.core.codes import SERVICE_SELECTS_NO_PODS
from netsight.graph.model.records import PodRecord, ServiceRecord
from netsight.graph.store.live import GraphView

Args = dict[str, Any]
Sampler = Callable[[random.Random], Args]


@dataclass(frozen=True)
class Names:
    """What the samplers draw from: names of objects the graph holds."""

    pods: list[tuple[str, int]]  # "ns/name" and its first container port
    services: list[str]
    namespaces: list[str]
    meshed: list[str]  # namespaces whose pods run a mesh proxy
    meshed_services: list[str]
    gateways: list[str]
    routes: list[str]

    @classmethod
    def of(cls, view: GraphView) -> Names:
        pods = [(f"{p.namespace}/{p.name}", p.ports[0].port) for p in view.for_each("Pod")
                if isinstance(p, PodRecord) and p.ports and p.ips]
        services = [f"{s.namespace}/{s.name}" for s in view.for_each("Service")
                    if isinstance(s, ServiceRecord) and s.selector]
        meshed = sorted({p.namespace for p in view.for_each("Pod")
                         if isinstance(p, PodRecord) and p.mesh_proxy})
        return cls(pods=sorted(pods), services=sorted(services),
                   namespaces=sorted(view.namespaces()), meshed=meshed,
                   meshed_services=sorted(s for s in services if s.split("/")[0] in meshed),
                   gateways=sorted(f"{g.namespace}/{g.name}" for g in view.for_each("Gateway")),
                   routes=sorted(f"{r.namespace}/{r.name}" for r in view.for_each("HTTPRoute")))


def deny_ingress(namespace: str) -> str:
    return ("apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
            f"metadata: {{name: bench-deny-ingress, namespace: {namespace}}}\n"
            "spec: {podSelector: {}, policyTypes: [Ingress]}\n")


def samplers(names: Names, finding: dict[str, Any] | None,
             tools: Mapping[str, Any]) -> dict[str, Sampler]:
    """A sampler per tool in ``tools``. ``finding``: one analyze_config reported, as it
    answered it, for the tools about findings (None: none was reported)."""

    def pod(rng: random.Random) -> tuple[str, int]:
        return rng.choice(names.pods)

    def ns(rng: random.Random) -> str:
        return rng.choice(names.namespaces)

    def route_ns(rng: random.Random) -> str:
        return rng.choice(names.routes).split("/")[0] if names.routes else ns(rng)

    def gateway(rng: random.Random) -> str:
        return rng.choice(names.gateways)

    def host(rng: random.Random) -> str:
        # The bench cluster's HTTPRoutes: route-<r> on gateway gw-<r % gateways>.
        index = rng.randrange(max(1, len(names.routes)))
        return f"r{index}.gw-{index % max(1, len(names.gateways))}.example.com"

    def blocking(rng: random.Random) -> Args:
        (source, _), (destination, port) = pod(rng), pod(rng)
        return {"source": source, "destination": destination, "port": port}

    def dns(rng: random.Random) -> Args:
        namespace, name = rng.choice(names.services).split("/")
        return {"name": f"{name}.{namespace}.svc.cluster.local", "from": pod(rng)[0]}

    signature = (finding or {}).get("signature", "")
    code = (finding or {}).get("code", SERVICE_SELECTS_NO_PODS.code)
    found: dict[str, Sampler] = {
        "diagnose_service": lambda rng: {"service": rng.choice(names.services)},
        "list_services": lambda rng: {"namespace": ns(rng)},
        "analyze_config": lambda rng: {"namespace": ns(rng)},
        "recent_changes": lambda rng: {"namespace": ns(rng)},
        "check_route_resolution": lambda rng: {"namespace": route_ns(rng)},
        "check_gateway_status": lambda rng: {"gateway": gateway(rng)},
        "diff_routes": lambda rng: {"host": host(rng), "path": "/"},
        "find_blocking_policies": blocking,
        "reachability_matrix": lambda rng: {
            "pods": [p for p, _ in rng.sample(names.pods, min(5, len(names.pods)))],
            "ports": [8080]},
        "k8s_networkpolicies": lambda rng: {"namespace": ns(rng)},
        "list_ingresses": lambda rng: {"namespace": ns(rng)},
        "who_can_reach": lambda rng: dict(zip(("destination", "port"), pod(rng), strict=True)),
        "what_can_reach": lambda rng: {"source": pod(rng)[0], "port": 8080},
        "gateway_list": lambda rng: {},
        "gateway_get": lambda rng: {"gateway": gateway(rng)},
        "check_mesh_config": lambda rng: {"namespace": rng.choice(names.meshed or
                                                                  names.namespaces)},
        # The finding as reported (a signature alone needs the knowledge base, off by
        # default), or where none was reported, a code's pattern.
        "explain_finding": lambda rng: {"finding": finding} if finding else {"code": code},
        "check_dns_resolution": dns,
        "record_fix_note": lambda rng: {"signature": signature, "code": code,
                                        "note": "benchmark note"},
        "istio_mtls_status": lambda rng: {"destination": rng.choice(
            names.meshed_services or names.services)},
        "check_provider_status": lambda rng: {},
        "recent_events": lambda rng: {"namespace": ns(rng)},
        # A namespace isolated for ingress: what it would lose, on port 8080.
        "diff_reachability": lambda rng: {"proposed": deny_ingress(ns(rng)), "ports": [8080]},
    }
    missing = sorted(set(tools) - set(found))
    if missing:
        raise LookupError(f"no argument sampler for {', '.join(missing)}: add one to "
                          "benchmarks/tool_args.py")
    return {name: found[name] for name in tools}
