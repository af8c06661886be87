"""The MCP client side of the suite, in a process of its own so that its CPU time is not
netsight's: ``python -m benchmarks.mcp_client URL CALLS QUESTIONS_JSON``.

Over loopback Streamable HTTP with the official SDK's ``Client`` (its default mode, one
self-contained POST per call): each question's end-to-end latency, warm-up calls first;
and the ``tools/list`` result's size in bytes as the server sends it (one raw session, the
figure tests/server holds to its budget). Prints one JSON object.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any

import aiohttp
import orjson
from mcp import Client

WARM_UP = 20
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "netsight-bench", "version": "0"}}}


async def tools_list_bytes(url: str) -> int:
    async with aiohttp.ClientSession() as http:
        async with http.post(url, json=INITIALIZE, headers=HEADERS) as answer:
            answer.raise_for_status()
            session = {"Mcp-Session-Id": answer.headers["Mcp-Session-Id"],
                       "Mcp-Protocol-Version": "2025-06-18"}
        async with http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                             headers={**HEADERS, **session}):
            pass
        async with http.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
                             headers={**HEADERS, **session}) as answer:
            answer.raise_for_status()
            return len(orjson.dumps(orjson.loads(await answer.read())["result"]))


def percentiles(ms: list[float]) -> dict[str, float]:
    ordered = sorted(ms)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)

    return {"p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": round(ordered[-1], 3),
            "n": len(ordered)}


async def measure(url: str, calls: int, questions: dict[str, tuple[str, dict[str, Any]]]
                  ) -> dict[str, Any]:
    listed = await tools_list_bytes(url)
    times: dict[str, list[float]] = {name: [] for name in questions}
    sizes: dict[str, int] = {}
    cpu = time.process_time()
    async with Client(url) as client:
        for index in range(WARM_UP + calls):
            for name, (tool, args) in questions.items():
                started = time.perf_counter()
                result = await client.call_tool(tool, args)
                took = (time.perf_counter() - started) * 1000
                if result.is_error:
                    raise RuntimeError(f"{tool}: {result.content}")
                if index >= WARM_UP:
                    times[name].append(took)
                sizes[name] = len(orjson.dumps(result.structured_content))
    cpu = time.process_time() - cpu
    return {"tools_list_bytes": listed,
            "client_cpu_ms_per_call": round(1000 * cpu / ((WARM_UP + calls) * len(questions)),
                                            3),
            "questions": {name: {"tool": questions[name][0], **percentiles(ms),
                                 "bytes": sizes[name]} for name, ms in times.items()}}


def main() -> None:
    url, calls, questions = sys.argv[1], int(sys.argv[2]), json.loads(sys.argv[3])
    print(json.dumps(asyncio.run(measure(url, calls, questions))))


if __name__ == "__main__":
    main()
