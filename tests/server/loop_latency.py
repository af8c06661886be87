"""How long calls hold a running ``netsight serve``'s event loop.

Tool calls run on the server's event loop (``server/mcp_tools.py``); a call that does not
return holds every other caller, ``/healthz``, ``/readyz`` and the informers. This harness
starts the simulated API server (``netsight sim``) and ``netsight serve`` in their own
processes, adds a hostile tenant's objects (HTTPRoutes and VirtualServices whose matches are
catastrophic backtracking patterns), and runs calls one at a time while a thread sends
``GET /healthz`` at a fixed interval over one kept-alive connection: the longest round trip
during a call is how long the loop was held (low by at most one interval). The probe and the
clients live in this process, apart from the server's, so neither competes for its loop.

Loopback only; every call and wait is bounded.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.client
import io
import os
import re
import signal
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import orjson

from netsight.sim.scenarios import GATEWAY_API_CRDS, ISTIO_NETWORKING_CRDS

NETSIGHT = [sys.executable, "-m", "netsight.cli"]
MCP_PROTOCOL = "2025-11-25"
MCP_HEADERS = {"Content-Type": "application/json",
               "Accept": "application/json, text/event-stream"}
PROBE_INTERVAL = 0.02  # seconds between two /healthz round trips
SETTLE = 0.15  # seconds between calls: the next call starts on an idle loop
MCP_BODY = 4 * 1024 * 1024  # the MCP SDK's bound on a request body
HOSTILE = "hostile"  # the namespace of the catastrophic patterns
EVIL_HOST = "evil.example.com"  # their Gateway API host
MESH_HOST = f"web.{HOSTILE}.svc.cluster.local"  # their VirtualServices' host
CATASTROPHIC = "/(a+)+b"  # exponential for a backtracking engine on "/aaa...a"
HEADER_PATTERN = "(a|aa)+$"
QUERY_PATTERN = "(x+x+)+y"


# --- the probe ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sample:
    sent: float  # time.monotonic()
    rtt: float  # seconds; inf when the request failed
    # Of ``rtt``, how long serve's loop thread and the probe's thread were runnable but
    # waiting for a core (Linux schedstat): a loaded machine's share, not the loop's.
    waited: float = 0.0

    @property
    def held(self) -> float:
        """The round trip as an idle machine would have seen it."""
        return self.rtt - self.waited


def runqueue_wait(pid: int, tid: int) -> float:
    """Seconds thread ``tid`` of ``pid`` has spent runnable, waiting for a core (0 where
    the kernel keeps no schedstat)."""
    try:
        with open(f"/proc/{pid}/task/{tid}/schedstat", "rb") as stat:
            return int(stat.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0


class Probe:
    """``GET /healthz`` every ``interval`` seconds from a thread, until stopped."""

    def __init__(self, port: int, server_pid: int, interval: float = PROBE_INTERVAL) -> None:
        self.port, self.server_pid, self.interval = port, server_pid, interval
        self.samples: list[Sample] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loop-probe", daemon=True)

    def __enter__(self) -> Probe:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        self._thread.join(120)

    def _run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
        own = os.getpid(), threading.get_native_id()
        server = self.server_pid, self.server_pid  # the main thread runs the loop

        def waited() -> float:
            return runqueue_wait(*own) + runqueue_wait(*server)

        while not self._stop.is_set():
            waited_before = waited()
            sent = time.monotonic()
            try:
                connection.request("GET", "/healthz")
                response = connection.getresponse()
                response.read()
                ok = response.status == 200
            except (OSError, http.client.HTTPException):
                ok = False
                connection.close()
                connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=600)
            rtt = time.monotonic() - sent
            self.samples.append(Sample(sent, rtt if ok else float("inf"),
                                       min(rtt, waited() - waited_before)))
            self._stop.wait(self.interval)
        connection.close()

    def during(self, start: float, end: float) -> list[Sample]:
        """The probes sent from one interval before ``start`` until ``end``, and any still
        in flight when the call began (on a loaded machine one may span a whole call)."""
        return [s for s in list(self.samples)
                if s.sent <= end and (s.sent >= start - self.interval or s.sent + s.rtt >= start)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0.0


# --- the calls ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Call:
    """One request: an MCP tool call (``tool`` and its arguments as raw JSON) or an HTTP
    one (``method`` and ``path``, with ``body``)."""

    label: str
    tool: str | None = None
    arguments: bytes = b"{}"
    method: str = "GET"
    path: str = ""
    body: bytes | None = None


def tool_call(label: str, tool: str, arguments: dict[str, Any] | bytes) -> Call:
    raw = arguments if isinstance(arguments, bytes) else orjson.dumps(arguments)
    return Call(label, tool=tool, arguments=raw)


@dataclass(slots=True)
class Outcome:
    label: str
    seconds: float  # the whole call, as the client saw it
    # The longest /healthz round trip meanwhile, less the time its threads waited for a
    # core: how long the loop was held, as on an idle machine.
    held: float
    p99: float  # of those round trips
    probes: int
    answer: str  # "ok", an error code, or an HTTP status
    held_wall: float = 0.0  # the longest round trip, as measured

    def row(self) -> dict[str, Any]:
        return {"call": self.label, "seconds": round(self.seconds, 3),
                "loop_held_max_s": round(self.held, 3), "loop_p99_s": round(self.p99, 3),
                "loop_held_wall_s": round(self.held_wall, 3),
                "probes": self.probes, "answer": self.answer}


class McpSession:
    """A handshake-era Streamable HTTP session in JSON answer mode, raw: the answers are
    read as bytes and barely parsed, so this process stays idle while netsight works."""

    def __init__(self, http: aiohttp.ClientSession, url: str,
                 headers: dict[str, str] | None = None) -> None:
        self.http, self.url = http, f"{url}/mcp"
        self.headers = {**MCP_HEADERS, **(headers or {})}
        self.next_id = 0

    async def open(self) -> McpSession:
        initialize = {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": MCP_PROTOCOL, "capabilities": {},
            "clientInfo": {"name": "loop-latency", "version": "0"}}}
        async with self.http.post(self.url, json=initialize, headers=self.headers) as answer:
            assert answer.status == 200, await answer.text()
            session = answer.headers["mcp-session-id"]
        self.headers |= {"mcp-session-id": session, "mcp-protocol-version": MCP_PROTOCOL}
        async with self.http.post(self.url, headers=self.headers, json={
                "jsonrpc": "2.0", "method": "notifications/initialized"}) as answer:
            assert answer.status == 202
        return self

    async def raw(self, tool: str, arguments: bytes) -> bytes:
        """The HTTP answer to a tools/call, ``HTTP <status>`` in front unless it is 200."""
        self.next_id += 1
        body = (b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":'
                % self.next_id + orjson.dumps(tool) + b',"arguments":' + arguments + b"}}")
        async with self.http.post(self.url, data=io.BytesIO(body),
                                  headers=self.headers) as answer:
            raw = await answer.read()
        return raw if answer.status == 200 else b"HTTP %d " % answer.status + raw

    async def structured(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        found: dict[str, Any] = orjson.loads(await self.raw(tool, orjson.dumps(arguments))
                                             )["result"]["structuredContent"]
        return found

    async def call(self, tool: str, arguments: bytes) -> str:
        """``ok``, the ToolError's code, or what else came back."""
        raw = await self.raw(tool, arguments)
        if raw.startswith(b"HTTP "):
            return raw[:8].decode()
        message = orjson.loads(raw)
        if "error" in message:
            return f"JSON-RPC {message['error'].get('code')}"
        result = message["result"]
        if not result.get("isError"):
            return "ok"
        return _error(result["content"][0]["text"])


def _error(text: str | bytes) -> str:
    """A ToolError's code, marked when it is TOOL_TIMEOUT's."""
    try:
        error = orjson.loads(text)
    except orjson.JSONDecodeError:
        return "not JSON"
    message = str(error.get("message"))
    if "TOOL_TIMEOUT" in message:
        return f"{error.get('code')} (TOOL_TIMEOUT)"
    return f"{error.get('code')}: {message[:160]}"


async def run_calls(url: str, probe: Probe, calls: list[Call]) -> list[Outcome]:
    outcomes = []
    timeout = aiohttp.ClientTimeout(total=600)
    async with aiohttp.ClientSession(timeout=timeout) as http:
        session = await McpSession(http, url).open()
        for call in calls:
            await asyncio.sleep(SETTLE)
            start = time.monotonic()
            if call.tool is not None:
                answer = await session.call(call.tool, call.arguments)
            else:
                headers = {"Content-Type": "application/json"} if call.body is not None else {}
                async with http.request(call.method, url + call.path, data=call.body,
                                        headers=headers) as response:
                    raw = await response.read()
                    answer = f"HTTP {response.status}"
                    if response.status >= 400:
                        answer += f" {_error(raw)}"
            end = time.monotonic()
            await asyncio.sleep(SETTLE)  # the probe in flight at the end comes back
            samples = probe.during(start, end)
            # No probe in the call's window (its thread had no core meanwhile): the call's
            # own time bounds what it could have held.
            held = [s.held for s in samples] or [end - start]
            outcomes.append(Outcome(call.label, end - start, max(held),
                                    percentile(held, 0.99), len(samples), answer,
                                    max((s.rtt for s in samples), default=0.0)))
    return outcomes


# --- the hostile tenant ---------------------------------------------------------------------


def _hostile_route(index: int, rules: int, matches: int) -> dict[str, Any]:
    match = {"path": {"type": "RegularExpression", "value": CATASTROPHIC},
             "headers": [{"type": "RegularExpression", "name": "x-evil",
                          "value": HEADER_PATTERN}],
             "queryParams": [{"type": "RegularExpression", "name": "q",
                              "value": QUERY_PATTERN}]}
    return {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
            "metadata": {"name": f"evil-{index}", "namespace": HOSTILE},
            "spec": {"parentRefs": [{"name": "public"}], "hostnames": [EVIL_HOST],
                     "rules": [{"matches": [match] * matches,
                                "backendRefs": [{"name": "web", "port": 80}]}] * rules}}


def _hostile_virtual_service(index: int, rules: int, matches: int) -> dict[str, Any]:
    match = {"uri": {"regex": CATASTROPHIC}, "headers": {"x-evil": {"regex": HEADER_PATTERN}},
             "queryParams": {"q": {"regex": QUERY_PATTERN}}}
    return {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
            "metadata": {"name": f"evil-{index}", "namespace": HOSTILE},
            "spec": {"hosts": [MESH_HOST], "gateways": ["mesh"],
                     "http": [{"match": [match] * matches,
                               "route": [{"destination": {"host": MESH_HOST}}]}] * rules}}


def hostile_objects(*, routes: int = 16, rules: int = 16, matches: int = 8
                    ) -> list[dict[str, Any]]:
    """The tenant's namespace, a Gateway taking every namespace's routes, and ``routes``
    HTTPRoutes and as many VirtualServices, each of ``rules`` rules of ``matches`` regex
    matches (Gateway API's own bounds are 16 rules and 64 matches)."""
    namespace = {"apiVersion": "v1", "kind": "Namespace",
                 "metadata": {"name": HOSTILE, "labels": {"istio-injection": "enabled"}}}
    gateway_class = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass",
                     "metadata": {"name": HOSTILE},
                     "spec": {"controllerName": "example.com/gateway-controller"}}
    gateway = {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "Gateway",
               "metadata": {"name": "public", "namespace": HOSTILE},
               "spec": {"gatewayClassName": HOSTILE, "listeners": [
                   {"name": "http", "port": 80, "protocol": "HTTP",
                    "allowedRoutes": {"namespaces": {"from": "All"}}}]}}
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": "web", "namespace": HOSTILE},
               "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}}
    return [*GATEWAY_API_CRDS, *ISTIO_NETWORKING_CRDS, namespace, gateway_class, gateway,
            service,
            *(_hostile_route(i, rules, matches) for i in range(routes)),
            *(_hostile_virtual_service(i, rules, matches) for i in range(routes))]


_PLURALS = {"CustomResourceDefinition": "customresourcedefinitions",
            "Namespace": "namespaces", "Service": "services", "GatewayClass": "gatewayclasses",
            "Gateway": "gateways", "HTTPRoute": "httproutes",
            "VirtualService": "virtualservices"}


async def create(api: str, objects: list[dict[str, Any]]) -> None:
    """POST each object to the simulated API server, as kubectl create would."""
    async with aiohttp.ClientSession() as http:
        for obj in objects:
            group = obj["apiVersion"]
            prefix = f"/api/{group}" if "/" not in group else f"/apis/{group}"
            namespace = obj["metadata"].get("namespace")
            where = f"/namespaces/{namespace}" if namespace else ""
            async with http.post(f"{api}{prefix}{where}/{_PLURALS[obj['kind']]}",
                                 json=obj) as answer:
                assert answer.status == 201, await answer.text()


# --- the processes --------------------------------------------------------------------------


@dataclass
class Running:
    url: str  # netsight serve, http://127.0.0.1:PORT
    api: str  # the simulated API server
    log: Path  # netsight serve's stderr
    pid: int  # netsight serve's
    port: int = field(init=False)

    def __post_init__(self) -> None:
        self.port = int(self.url.rsplit(":", 1)[1])


async def _line(path: Path, pattern: str, process: asyncio.subprocess.Process,
                timeout: float) -> re.Match[str]:
    deadline = time.monotonic() + timeout
    while True:
        found = re.search(pattern, path.read_text(errors="replace")) if path.exists() else None
        if found:
            return found
        assert process.returncode is None, f"exited: {path.read_text(errors='replace')[-2000:]}"
        assert time.monotonic() < deadline, f"{pattern!r} not seen in {timeout:.0f}s"
        await asyncio.sleep(0.1)


async def _ready(url: str, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    async with aiohttp.ClientSession() as http:
        while True:
            with contextlib.suppress(aiohttp.ClientError):
                async with http.get(f"{url}/readyz") as ready:
                    if ready.status == 200:
                        return
            assert time.monotonic() < deadline, "netsight serve never became ready"
            await asyncio.sleep(0.2)


@contextlib.asynccontextmanager
async def _process(args: list[str], stderr: Path) -> AsyncIterator[asyncio.subprocess.Process]:
    with stderr.open("wb") as sink:  # a file, not a pipe: nobody has to drain it
        process = await asyncio.create_subprocess_exec(
            *args, stdout=sink, stderr=sink, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    try:
        yield process
    finally:
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(process.wait(), 20)
            except TimeoutError:
                process.kill()
                await process.wait()


@contextlib.asynccontextmanager
async def serving(tmp: Path, *, pods: int, tool_timeout: float,
                  objects: list[dict[str, Any]], ready_timeout: float = 60.0
                  ) -> AsyncIterator[Running]:
    """``netsight sim`` with ``pods`` synthetic pods and ``objects`` added, and
    ``netsight serve`` against it, ready."""
    kubeconfig = tmp / "kubeconfig"
    async with _process([*NETSIGHT, "sim", "--scale", str(pods), "--port", "0",
                         "--kubeconfig", str(kubeconfig),
                         "--control-token-file", str(tmp / "control-token")],
                        tmp / "sim.log") as sim:
        api = (await _line(tmp / "sim.log", r"objects at (http://\S+) ", sim,
                           ready_timeout)).group(1)
        await create(api, objects)
        async with _process([*NETSIGHT, "serve", "--kubeconfig", str(kubeconfig),
                             "--port", "0", "--tool-timeout", f"{tool_timeout:g}s",
                             "--log-level", "warn", "--cluster-name", "sim",
                             # Every tool offered, and the knowledge base's observer running
                             # on the loop beside the calls.
                             "--toolsets", "core,policy,routing,mesh,notes,events",
                             "--knowledge-db", str(tmp / "knowledge.db")],
                            tmp / "serve.log") as serve:
            url = (await _line(tmp / "serve.log", r"MCP at (http://\S+)/mcp", serve,
                               ready_timeout)).group(1)
            await _ready(url, ready_timeout)
            yield Running(url, api, tmp / "serve.log", serve.pid)


# --- what to ask ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Names:
    """Objects of the served cluster that make large questions, read from its export."""

    namespaces: list[str]  # every namespace, the one with most pods first
    pod: str  # 'ns/name' of a pod of the largest Deployment there
    service: str  # 'ns/name' of the Service with most EndpointSlices there
    port: int  # that Service's first port
    pods: list[str]  # every pod, 'ns/name'


async def read_names(url: str) -> Names:
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{url}/api/graph/summary") as answer:
            summary = await answer.json()
        namespaces = sorted(summary["namespaces"], key=lambda n: -summary["namespaces"][n])
        nodes: dict[str, list[dict[str, Any]]] = {}
        for kind in ("Pod", "EndpointSlice"):
            async with http.get(f"{url}/api/graph", params={"kind": kind}) as answer:
                nodes[kind] = orjson.loads(await answer.read())["nodes"]
    biggest = namespaces[0]
    pods = sorted(f"{n['namespace']}/{n['name']}" for n in nodes["Pod"])
    # A Deployment's pods are named <deployment>-<replicaset hash>-<suffix>.
    deployments = Counter(p.rsplit("-", 2)[0] for p in pods if p.startswith(f"{biggest}/"))
    largest = max(deployments, key=lambda d: (deployments[d], d))
    services = Counter(f"{n['namespace']}/{n['name'].rsplit('-', 1)[0]}"
                       for n in nodes["EndpointSlice"] if n["namespace"] == biggest)
    service = max(services, key=lambda s: (services[s], s))
    async with aiohttp.ClientSession() as http:
        session = await McpSession(http, url).open()
        diagnosis = await session.structured("diagnose_service", {"service": service})
    port = int(re.search(r"(\d+)/", diagnosis["ports"][0]).group(1))  # type: ignore[union-attr]
    return Names(namespaces, next(p for p in pods if p.startswith(f"{largest}-")), service,
                 port, pods)


def nested(depth: int, leaf: bytes = b'"x"') -> bytes:
    """A JSON value ``depth`` arrays deep, written as text (no recursion here)."""
    return b"[" * depth + leaf + b"]" * depth


def alias_bomb(levels: int = 9, width: int = 10) -> str:
    """Billion laughs: each level lists the one before ``width`` times."""
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    lines += [f"l{i}: &l{i} [{', '.join([f'*l{i - 1}'] * width)}]" for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def repeated_rules(count: int = 200_000) -> str:
    """``rules: [*r, *r, ...]``: one rule repeated by alias, far past the rule bound."""
    aliases = ", ".join(["*r"] * count)
    return ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            f"metadata: {{name: bomb, namespace: {HOSTILE}}}\nspec:\n"
            f"  parentRefs: [{{name: public}}]\n  hostnames: [{EVIL_HOST}]\n"
            "  x: &r {backendRefs: [{name: web, port: 80}]}\n"
            f"  rules: [{aliases}]\n")


def merge_bomb(levels: int = 12) -> str:
    """Merge keys doubling a mapping at each level."""
    lines = ["m0: &m0 {a0: x, b0: y}"]
    lines += [f"m{i}: &m{i} {{<<: [*m{i - 1}], a{i}: *m{i - 1}, b{i}: *m{i - 1}}}"
              for i in range(1, levels)]
    return "\n".join(lines) + "\n"


def matches_at_their_bound(kind: str, *, objects: int = 100, matches: int = 19_000) -> str:
    """``objects`` HTTPRoutes or VirtualServices whose catastrophic path matches add up to
    near the proposal's bound on matches once aliases are expanded (20,000), written once
    and repeated by alias: a few kilobytes of YAML."""
    rules = 2_000 // objects
    per_rule = matches // (objects * rules)
    if kind == "HTTPRoute":
        anchor = f"{{path: {{type: RegularExpression, value: '{CATASTROPHIC}'}}}}"
        rule = f"{{matches: [{', '.join(['*m'] * per_rule)}], backendRefs: [{{name: web, " \
               "port: 80}]}"
        head = ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
                f"metadata: {{name: p{{index}}, namespace: {HOSTILE}}}\nspec:\n"
                f"  parentRefs: [{{name: public}}]\n  hostnames: [{EVIL_HOST}]\n")
        key = "rules"
    else:
        anchor = f"{{uri: {{regex: '{CATASTROPHIC}'}}}}"
        rule = f"{{match: [{', '.join(['*m'] * per_rule)}], route: [{{destination: " \
               f"{{host: {MESH_HOST}}}}}]}}"
        head = ("apiVersion: networking.istio.io/v1\nkind: VirtualService\n"
                f"metadata: {{name: p{{index}}, namespace: {HOSTILE}}}\nspec:\n"
                f"  hosts: [{MESH_HOST}]\n  gateways: [mesh]\n")
        key = "http"
    return "---\n".join(head.replace("{index}", str(i)) + f"  x-m: &m {anchor}\n"
                         f"  {key}: [{', '.join([rule] * rules)}]\n" for i in range(objects))


def largest_proposal(limit: int = 1 << 20) -> str:
    """A hundred HTTPRoutes of 16 rules with 12 path prefixes each, written out (no
    aliases), the prefixes padded to fill the 1 MiB bound: the most a legal proposal makes
    the reader and the engine do."""
    objects, rules, matches = 100, 16, 12  # within 2,000 rules and 20,000 matches

    def route(i: int, pad: int) -> str:
        text = (f"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
                f"metadata: {{name: big{i}, namespace: {HOSTILE}}}\nspec:\n"
                f"  parentRefs: [{{name: public}}]\n  hostnames: [{EVIL_HOST}]\n  rules:\n")
        for j in range(rules):
            prefixes = ", ".join(f"{{path: {{type: PathPrefix, value: /{i}-{j}-{k}-{'x' * pad}}}}}"
                                 for k in range(matches))
            text += f"  - matches: [{prefixes}]\n    backendRefs: [{{name: web, port: 80}}]\n"
        return text

    pad = (limit // objects - len(route(objects, 0)) - 8) // (rules * matches)
    proposal = "---\n".join(route(i, pad) for i in range(objects))
    assert len(proposal.encode()) <= limit, len(proposal)
    return proposal


def filling(*others: int) -> int:
    """Characters left of an MCP body once ``others`` and the envelope are in."""
    return MCP_BODY - sum(others) - 4_096


def long_request(host: str, beside: str = "") -> dict[str, Any]:
    """A request whose path, ``x-evil`` header and ``q`` parameter share what the MCP body
    holds beside ``beside``, each matching the catastrophic patterns' prefixes."""
    third = filling(len(beside.encode())) // 3
    return {"host": host, "path": "/" + "a" * third, "headers": {"x-evil": "a" * third},
            "query": {"q": "x" * third}}


def calls(names: Names) -> list[Call]:
    """Each tool with its largest legal input, the hostile inputs, and the HTTP endpoints
    that read the whole graph."""
    every = names.namespaces
    ns, pod, service, port = every[0], names.pod, names.service, names.port
    ports = list(range(1, 101))  # reachability_matrix takes at most 100
    long_path = "/" + "a" * filling()
    mesh = {"via": "mesh", "source_namespace": HOSTILE}
    routes, services = matches_at_their_bound("HTTPRoute"), \
        matches_at_their_bound("VirtualService")
    pods = []  # as many pods as the body holds
    room = filling()
    for name in names.pods:
        room -= len(name) + 3
        if room < 0:
            break
        pods.append(name)
    return [
        # every tool, its largest page over the whole cluster, in detail
        tool_call("analyze_config: whole cluster", "analyze_config",
                  {"limit": 500, "detail": True}),
        tool_call("check_gateway_status: whole cluster", "check_gateway_status",
                  {"limit": 500, "detail": True}),
        tool_call("check_mesh_config: whole mesh", "check_mesh_config",
                  {"limit": 500, "detail": True}),
        tool_call("check_route_resolution: every route", "check_route_resolution",
                  {"limit": 500, "detail": True}),
        tool_call("diagnose_service: most endpoints", "diagnose_service",
                  {"service": service, "detail": True}),
        tool_call("check_dns_resolution: the Service with most endpoints, from a pod",
                  "check_dns_resolution",
                  {"name": "{1}.{0}".format(*service.split("/")), "from": pod,
                   "detail": True}),
        tool_call("check_dns_resolution: a per-pod name of that Service", "check_dns_resolution",
                  {"name": ".".join(["a" * 63, *reversed(service.split("/")), "svc"]),
                   "from": pod, "detail": True}),
        tool_call("find_blocking_policies: longest path and host", "find_blocking_policies",
                  {"source": pod, "destination": f"Service/{service}", "port": port,
                   "method": "A" * 32, "path": "/" + "a" * 4095, "host": "a" * 255 + ":8080",
                   "detail": True}),
        tool_call("istio_mtls_status: every port of the largest Service", "istio_mtls_status",
                  {"destination": f"Service/{service}", "detail": True}),
        tool_call("check_provider_status: every provider", "check_provider_status",
                  {"limit": 500, "detail": True}),
        tool_call("gateway_get: the hostile Gateway", "gateway_get",
                  {"gateway": f"{HOSTILE}/public", "detail": True}),
        tool_call("gateway_list: whole cluster", "gateway_list", {"limit": 500, "detail": True}),
        tool_call("k8s_networkpolicies: whole cluster", "k8s_networkpolicies",
                  {"limit": 500, "detail": True}),
        tool_call("list_ingresses: whole cluster", "list_ingresses",
                  {"limit": 500, "detail": True}),
        tool_call("list_services: whole cluster", "list_services",
                  {"limit": 500, "detail": True}),
        tool_call("reachability_matrix: every namespace, 100 ports", "reachability_matrix",
                  {"namespaces": every, "ports": ports, "protocols": ["TCP", "UDP", "SCTP"],
                   "limit": 20_000, "detail": True}),
        tool_call("reachability_matrix: every pod the body holds", "reachability_matrix",
                  {"pods": pods, "ports": [80], "limit": 20_000}),
        tool_call("explain_finding: every occurrence of a code", "explain_finding",
                  {"code": "NS0101", "detail": True}),
        tool_call("record_fix_note: the longest note", "record_fix_note",
                  {"signature": "0123456789ab", "code": "NS0101", "note": "n" * 2000,
                   "author": "a" * 100}),
        tool_call("recent_changes: a day, whole cluster", "recent_changes",
                  {"limit": 500, "minutes": 1440, "detail": True}),
        tool_call("recent_changes: around the largest namespace", "recent_changes",
                  {"around": f"Namespace/{ns}", "limit": 500, "minutes": 1440,
                   "detail": True}),
        tool_call("recent_events: a week, whole cluster", "recent_events",
                  {"limit": 500, "minutes": 10080, "detail": True}),
        tool_call("what_can_reach: every port of every destination", "what_can_reach",
                  {"source": pod, "limit": 500, "detail": True}),
        tool_call("diff_reachability: a policy isolating every pod, 100 ports",
                  "diff_reachability",
                  {"proposed": "apiVersion: networking.k8s.io/v1\nkind: NetworkPolicy\n"
                   f"metadata: {{name: what-if, namespace: {ns}}}\nspec: {{podSelector: {{}}}}\n",
                   "namespaces": every, "ports": ports, "protocols": ["TCP", "UDP", "SCTP"],
                   "limit": 1000, "detail": True}),
        tool_call("who_can_reach: a pod of the largest Deployment", "who_can_reach",
                  {"destination": pod, "port": 8080, "limit": 500, "detail": True}),
        tool_call("who_can_reach: the Service with most endpoints", "who_can_reach",
                  {"destination": f"Service/{service}", "port": port, "limit": 500,
                   "detail": True}),
        # catastrophic patterns, live and proposed, on the longest request the body holds
        tool_call("diff_routes: live regexes, 4 MB path", "diff_routes",
                  {"host": EVIL_HOST, "path": long_path}),
        tool_call("diff_routes: live regexes, path, header and query", "diff_routes",
                  long_request(EVIL_HOST)),
        tool_call("diff_routes: live VirtualService regexes", "diff_routes",
                  {**long_request(MESH_HOST), **mesh}),
        tool_call("diff_routes: 20,000 proposed route regexes", "diff_routes",
                  {**long_request(EVIL_HOST, routes), "proposed": routes}),
        tool_call("diff_routes: 20,000 proposed VirtualService regexes", "diff_routes",
                  {**long_request(MESH_HOST, services), **mesh, "proposed": services}),
        tool_call("diff_routes: every Gateway, a day of changes", "diff_routes",
                  {"host": EVIL_HOST, "against": "1d", "detail": True}),
        # what YAML and JSON can make of a short text
        tool_call("diff_routes: billion laughs", "diff_routes",
                  {"host": EVIL_HOST, "proposed": alias_bomb()}),
        tool_call("diff_routes: rules repeated by alias", "diff_routes",
                  {"host": EVIL_HOST, "proposed": repeated_rules()}),
        tool_call("diff_routes: merge keys doubling", "diff_routes",
                  {"host": EVIL_HOST, "proposed": merge_bomb()}),
        tool_call("diff_routes: 1 MiB proposal", "diff_routes",
                  {"host": EVIL_HOST, "proposed": largest_proposal()}),
        tool_call("diff_routes: proposal nested 500k deep", "diff_routes",
                  {"host": EVIL_HOST, "proposed": "[" * 500_000 + "]" * 500_000}),
        tool_call("diff_routes: headers nested 100k deep", "diff_routes",
                  b'{"host":"' + EVIL_HOST.encode() + b'","headers":{"a":'
                  + nested(100_000) + b"}}"),
        tool_call("analyze_config: codes nested 150 deep", "analyze_config",
                  b'{"codes":' + nested(150) + b"}"),
        tool_call("analyze_config: as many codes as the body holds", "analyze_config",
                  {"codes": ["NS0101"] * (filling() // 9)}),
        # the HTTP endpoints that read the whole graph
        Call("GET /api/graph: whole graph", path="/api/graph"),
        Call("GET /api/graph: around the largest namespace, depth 5",
             path=f"/api/graph?around=Namespace/{ns}&depth=5"),
        Call("GET /api/graph/summary", path="/api/graph/summary"),
        Call("GET /api/findings/overview: whole cluster", path="/api/findings/overview"),
        Call("GET /api/findings: the largest namespace",
             path=f"/api/findings?object=Namespace/{ns}"),
        Call("GET /api/findings: the Service with most endpoints",
             path=f"/api/findings?object=Service/{service}"),
        Call("POST /api/verdict", method="POST", path="/api/verdict",
             body=orjson.dumps({"source": pod, "destination": f"Service/{service}",
                                "port": port})),
        Call("GET /metrics", path="/metrics"),
        Call("GET /readyz", path="/readyz"),
    ]


def report(outcomes: list[Outcome], idle: list[float], bound: float) -> dict[str, Any]:
    rows = sorted((o.row() for o in outcomes), key=lambda r: -r["loop_held_max_s"])
    return {"bound_s": bound, "idle_healthz_p50_s": round(statistics.median(idle), 4),
            "idle_healthz_p99_s": round(percentile(idle, 0.99), 4),
            "load_average": os.getloadavg(), "calls": rows}


async def idle(probe: Probe, seconds: float = 1.0) -> list[float]:
    """The round trips of ``seconds`` with no call running."""
    start = time.monotonic()
    await asyncio.sleep(seconds)
    return [s.rtt for s in probe.during(start + probe.interval, time.monotonic())]
