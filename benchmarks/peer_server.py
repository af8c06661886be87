"""A peer MCP server beside netsight: what an agent must fetch from ``kubernetes-mcp-server``
to answer the benchmark's questions, against netsight's single call.

The peer is the npm package's Go binary, installed beforehand by ``benchmarks/get-peer.sh``
into ``peer`` in the suite's work directory (pinned; nothing is downloaded here), run over
stdio with the suite's kubeconfig and ``--list-output yaml``, read-only, talked to with the
official ``mcp`` SDK client; netsight is called over its Streamable HTTP endpoint with the
same client. Per question: the calls, their wall time (one after another, as an agent makes
them; ``wall_ms`` is the median), the bytes of text the agent receives and bytes/4 as
tokens, and ``netsight`` the same figures for its one call.

The calls are the least an agent needs to decide the question itself, not a guess at what
one would wander through:

- ``reach`` (can x/a reach y/b on port P?): the pods of both namespaces (the labels every
  selector is matched against, and the pods a name like ``x/a`` stands for), the Namespaces
  (their labels, for namespaceSelectors), the NetworkPolicies of y (ingress) and of x
  (egress), and every other policy kind the cluster serves that netsight reads for this
  question: cluster-wide ones (AdminNetworkPolicy, BaselineAdminNetworkPolicy, ...) in full,
  namespaced ones (CiliumNetworkPolicy, Istio AuthorizationPolicy, ...) in x and y (and
  Istio's in its root namespace, istio-system, whose policies apply everywhere);
- ``no_endpoints`` (why does ns/svc have no endpoints?): the Service, the pods of its
  namespace (to match its selector and ports), its EndpointSlices (by the
  ``kubernetes.io/service-name`` label) and the namespace's events.
"""

from __future__ import annotations

import asyncio
import os
import platform
import statistics
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import Client, StdioServerParameters
from mcp.types import CallToolResult

from benchmarks.context import BenchContext
from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.discovery import WatchedKind, discover

VERSION = "0.0.67"  # the version benchmarks/get-peer.sh installs
ROOT = Path(__file__).resolve().parent.parent
PEER_DIR = ROOT / "benchmarks" / ".work" / "peer"  # get-peer.sh's default
INSTALL = "bash benchmarks/get-peer.sh"
# Built-in kinds the reach question reads through a tool of their own (pods, namespaces)
# or not at all (workloads only name the pods, Services are not asked about).
_NOT_POLICY = frozenset({"Pod", "Namespace", "Service", "ConfigMap", "Node", "Deployment",
                         "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob",
                         "ReplicationController", "NetworkPolicy"})
ISTIO_ROOT = "istio-system"
BUDGET_S = 60.0  # what one question's repeats may take at most
# The peer's client-go keeps its default client-side limit (5 requests/s, bursts of 10):
# each timed round starts with the bucket full, as a question asked afresh would, and the
# rounds are few.
REFILL_S = 2.5
PEER_REPEATS = 5


@dataclass(frozen=True)
class Call:
    tool: str
    args: dict[str, Any]


def binary(root: Path = PEER_DIR) -> Path:
    """Where the platform package puts the Go binary."""
    system = {"linux": "linux", "darwin": "darwin", "win32": "windows"}.get(sys.platform,
                                                                           sys.platform)
    machine = {"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"
               }.get(platform.machine().lower(), platform.machine())
    name = f"kubernetes-mcp-server-{system}-{machine}"
    return root / "node_modules" / name / "bin" / (name + (".exe" if system == "windows" else ""))


def peer_dir(work_dir: Path) -> Path:
    """Where the peer is installed: ``peer`` in the suite's work directory."""
    return (work_dir if work_dir.is_absolute() else ROOT / work_dir) / "peer"


def missing(root: Path = PEER_DIR) -> str | None:
    """Why the pinned peer cannot run from ``root``, or None when it can."""
    path = binary(root)
    install = INSTALL if root == PEER_DIR else f"{INSTALL} {root}"
    if not path.is_file():
        return (f"kubernetes-mcp-server {VERSION} is not installed ({path} does not exist): "
                f"run `{install}` (npm install --ignore-scripts into {root})")
    if not os.access(path, os.X_OK):
        return f"{path} is not executable: run `{install}` again"
    installed = (root / "version").read_text().strip() if (root / "version").is_file() else "?"
    if installed != VERSION:
        return (f"{root} holds kubernetes-mcp-server {installed}, not the pinned {VERSION}: "
                f"run `{install}`")
    return None


def served_policy_kinds(served: list[WatchedKind]) -> list[WatchedKind]:
    """The policy kinds the cluster serves that netsight reads for a reach question."""
    reads = TOOLS["find_blocking_policies"].metadata.reads
    return [kind for kind in served if kind.kind_id in reads and kind.kind not in _NOT_POLICY
            and kind.only is None]


def reach_calls(args: Mapping[str, Any], served: list[WatchedKind]) -> list[Call]:
    source, destination = str(args["source"]), str(args["destination"])
    namespaces = [source.split("/")[0], destination.split("/")[0]]
    namespaces = list(dict.fromkeys(namespaces))  # x == y: once
    calls = [Call("pods_list_in_namespace", {"namespace": ns}) for ns in namespaces]
    calls.append(Call("namespaces_list", {}))
    for ns in reversed(namespaces):  # the destination's ingress first, then the egress
        calls.append(Call("resources_list", {"apiVersion": "networking.k8s.io/v1",
                                             "kind": "NetworkPolicy", "namespace": ns}))
    for kind in served_policy_kinds(served):
        base = {"apiVersion": kind.api_version, "kind": kind.kind}
        if kind.namespaced:
            # Istio's policies in its root namespace apply to every namespace.
            scopes = [*namespaces, ISTIO_ROOT] if kind.group.endswith(".istio.io") \
                else namespaces
            calls.extend(Call("resources_list", {**base, "namespace": ns}) for ns in scopes)
        else:
            calls.append(Call("resources_list", base))
    return calls


def no_endpoints_calls(args: Mapping[str, Any]) -> list[Call]:
    namespace, name = str(args["service"]).split("/", 1)
    return [
        Call("resources_get", {"apiVersion": "v1", "kind": "Service", "namespace": namespace,
                               "name": name}),
        Call("pods_list_in_namespace", {"namespace": namespace}),
        Call("resources_list", {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                                "namespace": namespace,
                                "labelSelector": f"kubernetes.io/service-name={name}"}),
        Call("events_list", {"namespace": namespace}),
    ]


def text_bytes(result: CallToolResult) -> int:
    """What the agent's model reads of an answer: its text content."""
    return sum(len(part.text.encode()) for part in result.content if part.type == "text")


async def run_calls(client: Client, calls: list[Call]) -> tuple[float, int, list[str]]:
    """The calls one after another: (seconds, bytes received, errors)."""
    received, errors = 0, list[str]()
    begun = time.perf_counter()
    for call in calls:
        result = await client.call_tool(call.tool, call.args)
        received += text_bytes(result)
        if result.is_error:
            errors.append(f"{call.tool} {call.args}: "
                          + "".join(getattr(p, "text", "") for p in result.content)[:300])
    return time.perf_counter() - begun, received, errors


async def timed(client: Client, calls: list[Call], repeats: int, *, pause: float = 0.0
                ) -> dict[str, Any]:
    samples: list[float] = []
    received, errors = 0, list[str]()
    started = time.monotonic()
    while len(samples) < repeats and (not samples or time.monotonic() - started < BUDGET_S):
        await asyncio.sleep(pause)
        seconds, received, errors = await run_calls(client, calls)
        samples.append(seconds)
    return {"calls": len(calls), "wall_ms": round(statistics.median(samples) * 1000, 3),
            "wall_ms_min": round(min(samples) * 1000, 3), "n": len(samples),
            "bytes": received, "tokens": received // 4, "errors": errors}


async def measure(ctx: BenchContext) -> dict[str, Any]:
    root = peer_dir(ctx.work_dir)
    reason = missing(root)
    if reason is not None:
        return {"available": False, "reason": reason}
    transport = await KubeTransport.connect(str(ctx.kubeconfig))
    try:
        served = await discover(transport)
    finally:
        await transport.close()
    plans = {"reach": reach_calls(ctx.questions["reach"][1], served),
             "no_endpoints": no_endpoints_calls(ctx.questions["no_endpoints"][1])}
    log = ctx.work_dir / "peer-server.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    params = StdioServerParameters(command=str(binary(root)), args=[
        "--kubeconfig", str(ctx.kubeconfig), "--list-output", "yaml", "--read-only",
        "--disable-multi-cluster", "--log-file", str(log)])
    questions: dict[str, Any] = {}
    try:
        async with Client(params) as peer, Client(ctx.netsight_mcp_url) as netsight:
            with ctx.progress("peer server (kubernetes-mcp-server)", len(plans)) as bar:
                for name, calls in plans.items():
                    tool, args = ctx.questions[name]
                    await run_calls(peer, calls)  # warms the peer's discovery cache
                    await run_calls(netsight, [Call(tool, dict(args))])
                    mine = await timed(netsight, [Call(tool, dict(args))], ctx.repeats)
                    theirs = await timed(peer, calls, min(ctx.repeats, PEER_REPEATS),
                                         pause=REFILL_S)
                    # The peer's figures at the top, netsight's one call beside them.
                    questions[name] = {
                        **theirs, "fetched": [{"tool": c.tool, **c.args} for c in calls],
                        "question": {"tool": tool, "args": dict(args)}, "netsight": mine,
                        "slower": round(theirs["wall_ms"] / max(mine["wall_ms"], 1e-3), 1),
                        "more_bytes": round(theirs["bytes"] / max(mine["bytes"], 1), 1)}
                    bar.advance()
    except Exception as exc:  # the peer would not start or answer: keep the slot, say why
        while isinstance(exc, ExceptionGroup) and len(exc.exceptions) == 1:
            exc = exc.exceptions[0]
        tail = log.read_text(errors="replace")[-500:] if log.is_file() else ""
        return {"available": False,
                "reason": f"kubernetes-mcp-server {VERSION} failed: {type(exc).__name__}: "
                          f"{exc}; its log ({log}) ends: {tail}"}
    return {"available": True, "server": f"kubernetes-mcp-server {VERSION}",
            "flags": params.args[2:], "questions": questions,
            "notes": "wall time: the calls made one after another over stdio, after one "
                     f"untimed round, each round {REFILL_S} s after the last so that "
                     "client-go's default limit (5 requests/s, bursts of 10) starts full, "
                     f"at most {PEER_REPEATS} rounds; bytes: the text content returned "
                     "(what the agent's model reads); tokens: bytes/4. netsight: its one "
                     "call over Streamable HTTP with the same SDK client. The simulator "
                     "holds no Events, so the peer's events_list returns none: its bytes "
                     "are a lower bound."}
