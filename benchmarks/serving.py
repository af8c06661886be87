"""End-to-end serving: MCP tool calls over loopback HTTP, concurrent agents, graph export.

    .venv/bin/python benchmarks/serving.py                     # the demo cluster, ~1 min
    .venv/bin/python benchmarks/serving.py --scale 100k        # 100k pods, ~3 min

Separate processes, as in production: the simulated API server (``netsight sim``), netsight
(``netsight serve`` against it, informers and all), and the clients, which speak MCP with
the official SDK's ``Client`` over Streamable HTTP on 127.0.0.1: this process for the
single-session latencies, and ``--client-processes`` processes (default 5) for the
concurrent sessions, since one Python process of SDK clients cannot issue 200 calls/s here.
On this 2-core machine they all share the cores, so the figures include the clients' and
simulator's share; netsight's own CPU time (``/proc``) is reported beside them, per call and
as a share of one core during the concurrent run, and so is the server's mean time per
tools/call message (netsight's ``mcp.server.operation.duration`` from ``/metrics``, from the
message's arrival at the MCP server to its answer): what a loaded machine
cannot inflate much, where wall-clock latencies include every wait for a core.
``--responses sse`` measures netsight's SSE answer mode instead of the default JSON one.

Beside the SDK figures, not instead of them: the same single-session calls from
``RawSession``, a minimal JSON-RPC-over-HTTP client (one aiohttp connection, the same
handshake-era session: initialize, initialized, Mcp-Session-Id), with both processes' CPU per
call. The SDK client spends several times netsight's CPU per call on the same 2 cores, so
this tells netsight's share of the latency from the client's.

Measured (issue 6's targets): per-call latency of ``find_blocking_policies`` and
``diagnose_service`` over one session (p50 <= 5 ms, p99 <= 15 ms for find_blocking_policies);
10 concurrent sessions at 200 calls/s in all, with the error count (target: none); the whole
graph export (``GET /api/graph``, <= 3 s at 100k pods) and a neighbourhood export
(``around=...&depth=1``, <= 50 ms). The baseline beside the tool calls is an MCP ``ping``
over the same session: the SDK and HTTP round trip with no tool behind it (that session uses
the handshake-era protocol, which has ping; the concurrent agents negotiate 2026-07-28).
The single session also reports the SDK client's check of an answer against the
advertised ``outputSchema`` (the top-level shape, ``analyzers/core/tool_schemas.py``) beside
the same check with pydantic's full schema, and the calls again from a default-mode
``Client`` (2026-07-28). Results as JSON on stdout and in
``benchmarks/out/serving-<scale>.json``. Never part of the test suite.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import contextlib
import gc
import json
import multiprocessing
import operator
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import aiohttp
from informers import GcPauses  # this directory's informer benchmarks, run as a script
from jsonschema.exceptions import best_match
from jsonschema.validators import validator_for
from mcp import Client
from referencing import Registry

from netsight.analyzers.tools import TOOLS

OUT = Path(__file__).resolve().parent / "out"
NETSIGHT = [sys.executable, "-m", "netsight.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def percentiles(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"p50": round(statistics.median(ordered), 3), "p90": at(0.9), "p99": at(0.99),
            "max": round(ordered[-1], 3), "n": len(ordered)}


@contextlib.contextmanager
def sim_and_serve(scale: str, ready_timeout: float, serve_args: list[str], *,
                  tree: Path | None = None) -> Iterator[tuple[str, int]]:
    """``netsight sim --scale`` and ``netsight serve`` against it, each in its own process
    (from ``tree``'s checkout when given): serve's URL and pid, both stopped after."""
    sim_port, port = free_port(), free_port()
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    with tempfile.TemporaryDirectory() as tmp:
        kubeconfig = Path(tmp) / "kubeconfig"
        sim = subprocess.Popen([*NETSIGHT, "sim", "--scale", scale, "--port", str(sim_port),
                                "--kubeconfig", str(kubeconfig)], env=env, cwd=tree,
                               stdout=subprocess.DEVNULL)
        serve = None
        try:
            deadline = time.monotonic() + ready_timeout
            while not kubeconfig.exists():
                if time.monotonic() > deadline or sim.poll() is not None:
                    raise SystemExit("the simulator did not start")
                time.sleep(0.2)
            serve = subprocess.Popen([*NETSIGHT, "serve", "--kubeconfig", str(kubeconfig),
                                      "--port", str(port), *serve_args], env=env, cwd=tree)
            yield f"http://127.0.0.1:{port}", serve.pid
        finally:
            for process in (serve, sim):
                if process is not None:
                    process.send_signal(signal.SIGTERM)
                    try:
                        process.wait(20)
                    except subprocess.TimeoutExpired:
                        process.kill()


async def wait_ready(url: str, timeout: float) -> float:
    started = time.perf_counter()
    async with aiohttp.ClientSession() as http:
        while time.perf_counter() - started < timeout:
            try:
                async with http.get(f"{url}/readyz") as response:
                    if response.status == 200:
                        return time.perf_counter() - started
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.2)
    raise TimeoutError(f"{url} not ready in {timeout:.0f}s")


async def pick_pods(url: str) -> tuple[list[str], str]:
    """Pod names (ns/name) and a Service (ns/name) from the graph's export."""
    async with aiohttp.ClientSession() as http, \
            http.get(f"{url}/api/graph", params={"kind": "Pod"}) as response:
        data = await response.json()
    pods = [n["id"].split("/", 1)[1] for n in data["nodes"]]
    async with aiohttp.ClientSession() as http, \
            http.get(f"{url}/api/graph", params={"kind": "Service"}) as response:
        services = [n["id"].split("/", 1)[1] for n in (await response.json())["nodes"]]
    return pods, services[len(services) // 2]


WARM_UP = 20  # calls before any measurement: caches, connection, the client's imports


async def timed(calls: int, call: Callable[[], Awaitable[Any]], *, warm_up: int = WARM_UP
                ) -> list[float]:
    for _ in range(min(warm_up, calls)):
        await call()
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        await call()
        times.append((time.perf_counter() - started) * 1000)
    return times


class Calls:
    """find_blocking_policies over one client, in batches: latencies, both processes' CPU."""

    def __init__(self, client: Client, pods: list[str], rng: random.Random, server: int,
                 answers: list[dict[str, Any]]) -> None:
        self.client, self.pods, self.rng, self.server = client, pods, rng, server
        self.answers = answers
        self.ms: list[float] = []
        self.server_cpu = self.client_cpu = 0.0

    async def call(self) -> None:
        source, destination = self.rng.sample(self.pods, 2)
        result = await self.client.call_tool("find_blocking_policies", {
            "source": source, "destination": destination, "port": 80})
        if result.is_error or result.structured_content is None:
            raise RuntimeError(result.content)
        self.answers.append(result.structured_content)

    async def batch(self, calls: int) -> None:
        cpu, client_cpu = cpu_seconds(self.server), time.process_time()
        self.ms += await timed(calls, self.call, warm_up=0)
        self.server_cpu += cpu_seconds(self.server) - cpu
        self.client_cpu += time.process_time() - client_cpu

    def figures(self, prefix: str) -> dict[str, Any]:
        calls = max(1, len(self.ms))
        return {f"{prefix}_ms": percentiles(self.ms),
                # netsight's CPU for a whole call (HTTP, MCP SDK, tool)
                f"{prefix}_server_cpu_ms_per_call": round(1000 * self.server_cpu / calls, 2),
                # this process (the SDK client, the test's own loop) per call
                f"{prefix}_client_cpu_ms_per_call": round(1000 * self.client_cpu / calls, 2)}


async def one_session(mcp_url: str, pods: list[str], service: str, calls: int,
                      rng: random.Random, server: int, batches: int = 6) -> dict[str, Any]:
    """Latencies over one session: ping, find_blocking_policies and diagnose_service, on
    the handshake-era protocol (whose sessions answer ping; 2026-07-28 has none); and
    find_blocking_policies from a client in the SDK's default mode, which negotiates
    2026-07-28 with netsight (one self-contained POST per call, what the concurrent agents
    use). The two clients' calls alternate in ``batches`` batches, so a change of load on
    the shared machine falls on both."""
    base_url = mcp_url.removesuffix("/mcp")
    answers: list[dict[str, Any]] = []
    async with Client(mcp_url, mode="legacy") as client, Client(mcp_url) as modern:
        ping = await timed(calls, client.send_ping)
        legacy_calls = Calls(client, pods, rng, server, answers)
        modern_calls = Calls(modern, pods, rng, server, answers)
        for _ in range(WARM_UP):  # first calls: the client lists the tools, imports jsonschema
            await legacy_calls.call()
            await modern_calls.call()
        handler = await tool_seconds(base_url, "find_blocking_policies")
        pauses = GcPauses(time.perf_counter)  # this client's own collections, while timed
        gc.callbacks.append(pauses.on_gc)
        for index in range(batches):
            size = calls // batches + (index < calls % batches)
            await legacy_calls.batch(size)
            await modern_calls.batch(size)
        gc.callbacks.remove(pauses.on_gc)
        handler_s, handled = map(operator.sub, await tool_seconds(
            base_url, "find_blocking_policies"), handler)
        advertised = {t.name: t.output_schema for t in (await client.list_tools()).tools}

        async def diagnose() -> None:
            result = await client.call_tool("diagnose_service", {"service": service})
            if result.is_error:
                raise RuntimeError(result.content)

        single = {"ping_ms": percentiles(ping),
                  **legacy_calls.figures("find_blocking_policies"),
                  # the server's own mean time per call (its tools/call span: the SDK's
                  # params check, arguments, analyzer, rendering, the answer's wire form),
                  # over the calls of both clients
                  "find_blocking_policies_handler_ms_mean": round(1000 * handler_s / handled, 2),
                  **modern_calls.figures("find_blocking_policies_2026"),
                  "client_gc_while_timed": pauses.summary(),
                  "diagnose_service_ms": percentiles(await timed(calls, diagnose))}
    # The SDK client checks every answer against the tool's outputSchema (jsonschema):
    # its CPU per answer with the schema netsight advertises and, side by side on the same
    # answers, with pydantic's full one (every nested field, ``$ref``s; tool_schemas.py).
    pydantic_schema = TOOLS["find_blocking_policies"].result.model_json_schema(
        mode="serialization")
    single["client_output_check_ms_per_answer"] = {
        "advertised": output_check_ms(advertised["find_blocking_policies"] or {}, answers),
        "pydantic": output_check_ms(pydantic_schema, answers)}
    return single


def output_check_ms(schema: dict[str, Any], answers: list[dict[str, Any]]) -> float:
    """Mean CPU ms of the SDK client's check of one answer against ``schema``, done as
    ``mcp.client.session`` does it (a validator built once, ``best_match`` over errors)."""
    validator = validator_for(schema)(schema, registry=Registry())
    started = time.process_time()
    for answer in answers:
        if best_match(validator.iter_errors(answer)) is not None:
            raise RuntimeError("an answer does not match the output schema")
    return round(1000 * (time.process_time() - started) / max(1, len(answers)), 3)


class RawSession:
    """A minimal MCP client: JSON-RPC over one keep-alive HTTP connection (aiohttp), with the
    same session semantics as the SDK's handshake-era ``Client``: ``initialize``, then
    ``notifications/initialized``, then requests carrying ``Mcp-Session-Id`` and
    ``Mcp-Protocol-Version``; answers read as JSON or as an SSE stream, whichever netsight
    sends. No models, no validation: it shows how much of a call's latency is the SDK
    client's own work rather than netsight's. Not a replacement for the SDK figures."""

    VERSION = "2025-11-25"

    def __init__(self, url: str) -> None:
        self.url = url
        self.http = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=1))
        self.headers = {"Content-Type": "application/json",
                        "Accept": "application/json, text/event-stream"}
        self.next_id = 0

    async def __aenter__(self) -> RawSession:
        async with self.http.post(self.url, headers=self.headers, data=json.dumps({
                "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": self.VERSION, "capabilities": {},
                    "clientInfo": {"name": "netsight-benchmark-raw", "version": "0"}}})
                ) as response:
            answer = await self._answer(response)
            session = response.headers["Mcp-Session-Id"]
        if answer.get("result", {}).get("protocolVersion") != self.VERSION:
            raise RuntimeError(f"initialize: {answer}")
        self.headers = {**self.headers, "Mcp-Session-Id": session,
                        "Mcp-Protocol-Version": self.VERSION}
        async with self.http.post(self.url, headers=self.headers, data=json.dumps(
                {"jsonrpc": "2.0", "method": "notifications/initialized"})) as response:
            if response.status != 202:
                raise RuntimeError(f"notifications/initialized: HTTP {response.status}")
        return self

    async def __aexit__(self, *_: object) -> None:
        async with self.http.delete(self.url, headers=self.headers):
            pass
        await self.http.close()

    async def request(self, method: str, params: dict[str, Any] | None = None
                      ) -> dict[str, Any]:
        self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            message["params"] = params
        async with self.http.post(self.url, headers=self.headers,
                                  data=json.dumps(message)) as response:
            answer = await self._answer(response)
        if answer.get("id") != self.next_id or "result" not in answer:
            raise RuntimeError(f"{method}: {str(answer)[:200]}")
        result: dict[str, Any] = answer["result"]
        return result

    @staticmethod
    async def _answer(response: aiohttp.ClientResponse) -> dict[str, Any]:
        if response.status != 200:
            raise RuntimeError(f"HTTP {response.status}: {(await response.text())[:200]}")
        body = await response.read()
        if response.content_type == "text/event-stream":  # the last message is the answer
            data = [line[5:] for line in body.splitlines() if line.startswith(b"data:")]
            body = data[-1]
        answer: dict[str, Any] = json.loads(body)
        return answer


async def raw_session(mcp_url: str, pods: list[str], calls: int, rng: random.Random,
                      server: int) -> dict[str, Any]:
    """The single-session figures again from ``RawSession``, the same calls over the same
    protocol generation: what is left of the latency is netsight and the HTTP round trip."""
    async with RawSession(mcp_url) as session:
        async def ping() -> None:
            await session.request("ping")

        async def blocking() -> None:
            source, destination = rng.sample(pods, 2)
            result = await session.request("tools/call", {
                "name": "find_blocking_policies",
                "arguments": {"source": source, "destination": destination, "port": 80}})
            if result.get("isError") or "structuredContent" not in result:
                raise RuntimeError(str(result)[:200])

        ping_ms = await timed(calls, ping)
        for _ in range(WARM_UP):
            await blocking()
        cpu, client_cpu = cpu_seconds(server), time.process_time()
        blocking_ms = await timed(calls, blocking, warm_up=0)
        per_call = 1000 / calls
        return {"ping_ms": percentiles(ping_ms),
                "find_blocking_policies_ms": percentiles(blocking_ms),
                "find_blocking_policies_server_cpu_ms_per_call":
                    round(per_call * (cpu_seconds(server) - cpu), 2),
                "find_blocking_policies_client_cpu_ms_per_call":
                    round(per_call * (time.process_time() - client_cpu), 2)}


def _agent_process(mcp_url: str, pods: list[str], indexes: list[int], sessions: int,
                   rate: float, duration: float, start_at: float) -> dict[str, Any]:
    """One client process: the agents ``indexes`` of ``sessions``, each on its own schedule
    of ``rate / sessions`` calls per second from wall-clock ``start_at``."""
    return asyncio.run(_agents(mcp_url, pods, indexes, sessions, rate, duration, start_at))


async def _agents(mcp_url: str, pods: list[str], indexes: list[int], sessions: int,
                  rate: float, duration: float, start_at: float) -> dict[str, Any]:
    latencies: list[float] = []
    # Each session's first call, also in ``latencies``: the SDK client lists the tools
    # (netsight's tools/list, ~12-15 ms of server CPU) and compiles the tool's output-schema
    # validator before it returns, once per session, and all sessions make it at once.
    first: list[float] = []
    errors: list[str] = []
    late = [0]
    window = [float("inf"), 0.0]  # wall-clock time of the first call and the last answer

    async def agent(index: int) -> None:
        rng = random.Random(index)
        interval = sessions / rate
        async with Client(mcp_url) as client:
            # Sessions open first; every process starts calling at the same wall-clock time.
            await asyncio.sleep(max(0.0, start_at - time.time()))
            window[0] = min(window[0], time.time())
            start = time.perf_counter() + rng.random() * interval
            n = 0
            while (due := start + n * interval) < start + duration:
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                else:
                    late[0] += 1
                source, destination = rng.sample(pods, 2)
                began = time.perf_counter()
                try:
                    result = await client.call_tool("find_blocking_policies", {
                        "source": source, "destination": destination, "port": 80})
                    if result.is_error:
                        errors.append(str(result.content)[:200])
                except Exception as exc:  # a failed call is what this counts
                    errors.append(f"{type(exc).__name__}: {exc}"[:200])
                latencies.append((time.perf_counter() - began) * 1000)
                if n == 0:
                    first.append(latencies[-1])
                n += 1
            window[1] = max(window[1], time.time())

    await asyncio.gather(*(agent(i) for i in indexes))
    return {"latencies": latencies, "first": first, "errors": errors, "late": late[0],
            "window": window}


async def concurrent_sessions(mcp_url: str, pods: list[str], sessions: int, rate: float,
                              duration: float, processes: int, server: int
                              ) -> dict[str, Any]:
    """``sessions`` clients spread over ``processes`` client processes (one Python process
    cannot drive 200 calls/s of SDK clients on this machine), each session calling at
    rate/sessions per second on a fixed schedule; netsight's CPU over the run beside it."""
    processes = max(1, min(processes, sessions))
    groups = [list(range(i, sessions, processes)) for i in range(processes)]
    start_at = time.time() + 8.0  # room for every process to import the SDK and connect
    loop = asyncio.get_running_loop()
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(processes, mp_context=context) as pool:
        futures = [loop.run_in_executor(pool, _agent_process, mcp_url, pods, group, sessions,
                                        rate, duration, start_at) for group in groups]
        await asyncio.sleep(max(0.0, start_at - time.time()))
        cpu_before, started = cpu_seconds(server), time.time()
        parts = await asyncio.gather(*futures)
        cpu = cpu_seconds(server) - cpu_before
        cpu_window = time.time() - started
    # From the first call of any process to the last answer: a process that started late
    # (its imports on a loaded machine) shows as calls started late, not as a longer run.
    elapsed = max(p["window"][1] for p in parts) - min(p["window"][0] for p in parts)
    latencies = [ms for part in parts for ms in part["latencies"]]
    first = [ms for part in parts for ms in part["first"]]
    later = sorted(latencies)
    for ms in first:  # the calls after each session's first: those netsight alone answers
        later.remove(ms)
    errors = [error for part in parts for error in part["errors"]]
    return {"sessions": sessions, "client_processes": processes, "target_calls_per_s": rate,
            "achieved_calls_per_s": round(len(latencies) / elapsed, 1),
            "calls": len(latencies), "errors": len(errors), "error_samples": errors[:3],
            "calls_started_late": sum(part["late"] for part in parts),
            "latency_ms": percentiles(latencies),
            "first_call_ms": percentiles(first),
            "latency_ms_after_first_calls": percentiles(later),
            "seconds": round(elapsed, 1),
            "server_cpu_percent": round(100 * cpu / cpu_window, 1),
            "server_cpu_ms_per_call": round(1000 * cpu / max(1, len(latencies)), 2)}


async def tool_seconds(url: str, tool: str) -> tuple[float, float]:
    """(sum, count) of netsight's mcp.server.operation.duration for calls of ``tool`` that
    answered without an error, from /metrics."""
    async with aiohttp.ClientSession() as http, http.get(f"{url}/metrics") as response:
        text = await response.text()
    found = {"sum": 0.0, "count": 0.0}
    for line in text.splitlines():
        for part in found:
            if line.startswith(f"mcp_server_operation_duration_seconds_{part}{{") \
                    and f'gen_ai_tool_name="{tool}"' in line and "error_type" not in line:
                found[part] += float(line.rsplit(" ", 1)[1])
    return found["sum"], found["count"]


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of process ``pid`` so far (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def exports(url: str, around: str, runs: int) -> dict[str, Any]:
    async def fetch(params: dict[str, str]) -> tuple[float, int]:
        started = time.perf_counter()
        size = 0
        async with aiohttp.ClientSession() as http, \
                http.get(f"{url}/api/graph", params=params) as response:
            async for chunk in response.content.iter_any():
                size += len(chunk)
        return time.perf_counter() - started, size

    whole = [await fetch({}) for _ in range(runs)]
    near = [await fetch({"around": around, "depth": "1"}) for _ in range(max(runs, 20))]
    return {"whole_s": round(statistics.median(t for t, _ in whole), 3),
            "whole_mb": round(whole[0][1] / 1e6, 1),
            "around_ms": percentiles([t * 1000 for t, _ in near])}


async def measure(args: argparse.Namespace, url: str, server: int) -> dict[str, Any]:
    ready_s = await wait_ready(url, args.ready_timeout)
    pods, service = await pick_pods(url)
    # The pods came from the whole export (100k nodes at 100k pods): what its parse left
    # in this process's heap made the client's own full collections slow enough (86 ms)
    # to land in one measured call per run, the 100k runs' single-call maximum. Collected
    # and frozen once, as a long-running agent's settled heap would be.
    gc.collect()
    gc.freeze()
    rng = random.Random(1)
    single = await one_session(f"{url}/mcp", pods, service, args.calls, rng, server)
    # Beside it, not instead of it: the same calls from a minimal client (RawSession).
    raw = await raw_session(f"{url}/mcp", pods, args.calls, random.Random(1), server)
    busy = await concurrent_sessions(f"{url}/mcp", pods, args.sessions, args.rate,
                                     args.duration, args.client_processes, server)
    graph = await exports(url, f"Service/{service}", args.export_runs)
    # ready_after_start_s: from netsight's start to /readyz answering 200
    return {"ready_after_start_s": round(ready_s, 1), "pods": len(pods),
            "single_session": single, "single_session_raw_client": raw,
            "concurrent": busy, "export": graph}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", default="demo", help="demo, or a pod count such as 100k")
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--sessions", type=int, default=10)
    parser.add_argument("--rate", type=float, default=200.0, help="calls/s, all sessions")
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--client-processes", type=int, default=5,
                        help="processes the concurrent sessions are spread over")
    parser.add_argument("--responses", default="json", choices=("json", "sse"),
                        help="netsight serve --responses")
    parser.add_argument("--export-runs", type=int, default=3)
    parser.add_argument("--ready-timeout", type=float, default=300.0)
    args = parser.parse_args()
    OUT.mkdir(exist_ok=True)
    load_before = os.getloadavg()  # the machine is shared: what else was running
    with sim_and_serve(args.scale, args.ready_timeout,
                       ["--log-level", "warn", "--responses", args.responses]) as (url, pid):
        result = asyncio.run(measure(args, url, pid))
    result = {"scale": args.scale, "responses": args.responses,
              "load_average_before": load_before, "load_average": os.getloadavg(), **result}
    suffix = "" if args.responses == "json" else f"-{args.responses}"
    (OUT / f"serving-{args.scale}{suffix}.json").write_text(json.dumps(result, indent=1))
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
