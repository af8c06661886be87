"""Experiment (issue 4): would decoding watch lines in a worker process cut netsight's CPU
per watch event enough to sustain 5,000 events/s? Measured, not taken (benchmarks/README.md,
``watch-worker``).

The initial sync builds Pod list pages' records in a worker process (list_worker.py,
worker_rows.py).
This asks the same of watch streams before any of it goes into the informers: the recorded
watch streams of ``informers.py watch`` (100k pods, 30k events) are replayed through the
real informers and GraphStore in five modes, alternated, each replay in a fresh process:

- ``off``: the informers as they are (``Informer.watch``: typed_events.py decodes each line and
  builds its record in this process);
- ``inline``: the same per-line path, the stream split a chunk at a time as the modes
  below split it (so they differ from it in the decoding alone);
- ``process``: a real worker process (a Unix socket; one request per chunk, as the stream
  hands chunks over) decodes each chunk's Pod lines and builds their records (typed_records.py),
  answering with worker_rows.py's rows (one page a chunk), the event types, deleted keys and
  resourceVersions; this process rebuilds the records (worker_rows.decode: interning, shared label
  maps, owners and ports, exactly as for the list worker's pages) and applies them in
  order. Lines it cannot read would go the in-process way (none in this input).
  EndpointSlices and NetworkPolicies stay in-process: worker_rows.py has no slice form;
- ``rows``: ``process`` with free, instant IPC: the worker's answers are computed in another
  process before the replay and taken from memory. What a worker could save at best with
  the records rebuilt here;
- ``free``: the unreachable ceiling. Every Pod and EndpointSlice line's record (or deleted
  key) is built before the replay, in this process; the informers only split and apply.

Reported per mode: this process's CPU per event over the replayed stream (process time),
the worker's (``/proc``), their sum, and the change ring's and edges' digests (every mode
must leave the same graph: ``same_graph``).

    .venv/bin/python benchmarks/watch_worker.py --runs 3
    .venv/bin/python benchmarks/watch_worker.py --pods 20000 --events 20000 --runs 1

The recorded input is ``informers.py watch``'s (recorded on first use, as that command
does). Results go to ``benchmarks/out/informers-watch-worker.json``. Never part of the test
suite; the prototype worker here is the experiment's, not netsight's.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import gc
import json
import os
import pickle
import shutil
import socket
import statistics
import struct
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import msgspec

sys.path.insert(0, str(Path(__file__).resolve().parent))
import informers  # the recorded input, its transport, the collector's keeper

MODES = ("off", "inline", "rows", "process", "free")
_FRAME = struct.Struct("!I")
# Per line, what the worker made of it: a record (in the chunk's wire page), a deletion,
# or nothing (read it in-process).
_RECORD, _DELETED, _NOT_TYPED = ord("R"), ord("D"), ord("N")


class Reply(msgspec.Struct, array_like=True):
    codes: bytes
    versions: list[str]
    deleted: list[tuple[str, str]]
    page: bytes


# --- the worker process ---------------------------------------------------------------------


def pod_chunk_reply(lines: list[bytes]) -> bytes:
    """The worker's answer to one chunk's Pod lines: per line a record (as wire rows, one
    page a chunk), a deletion, or "read it yourself", with its resourceVersion."""
    from netsight.graph.ingest import worker_rows
    from netsight.graph.ingest.typed_events import DeletedEvent, PodEvent, decode_typed_event
    from netsight.graph.ingest.typed_records import pod_record
    from netsight.graph.model.kinds import Kind

    codes = bytearray()
    versions: list[str] = []
    deleted: list[tuple[str, str]] = []
    records: list[Any] = []
    for line in lines:
        event = decode_typed_event(Kind.POD, line)
        obj = None if event is None else event.object
        if obj is None or event is None or obj.kind not in (None, "Pod") \
                or obj.apiVersion not in (None, "v1") \
                or event.type not in ("ADDED", "MODIFIED", "DELETED"):
            codes.append(_NOT_TYPED)
            versions.append("")
            continue
        meta = obj.metadata
        if isinstance(event, DeletedEvent):
            codes.append(_DELETED)
            deleted.append((meta.namespace or "", meta.name))
        else:
            assert isinstance(event, PodEvent)
            try:
                records.append(pod_record(event.object))
            except Exception:
                codes.append(_NOT_TYPED)
                versions.append("")
                continue
            codes.append(_RECORD)
        versions.append(meta.resourceVersion or "")
    return _ENCODER.encode(Reply(bytes(codes), versions, deleted,
                                 worker_rows.encode(records) if records else b""))


_ENCODER = msgspec.msgpack.Encoder()


def child_main(fd: int) -> None:
    """The worker process: read chunks of Pod watch lines, answer each (pod_chunk_reply)."""
    gc.disable()  # as the list worker: records freed with each chunk, no cycles
    sock = socket.socket(fileno=fd)
    source = sock.makefile("rb")
    lines_of = msgspec.msgpack.Decoder(list[bytes])
    while True:
        head = source.read(_FRAME.size)
        if len(head) < _FRAME.size:
            return
        (size,) = _FRAME.unpack(head)
        reply = pod_chunk_reply(lines_of.decode(source.read(size)))
        sock.sendall(_FRAME.pack(len(reply)) + reply)


def split_lines(chunk: bytes) -> list[bytes]:
    """A recorded chunk's lines (each chunk holds whole lines)."""
    return [line for line in chunk.split(b"\n") if line.strip()]


def replies_elsewhere(input_path: str) -> collections.deque[bytes]:
    """``rows``: the worker's answer to every Pod chunk of the stream, computed in another
    process before the replay (so this one's caches and interned strings stay its own)."""
    import concurrent.futures
    import multiprocessing

    with concurrent.futures.ProcessPoolExecutor(
            1, mp_context=multiprocessing.get_context("spawn")) as pool:
        return collections.deque(pool.submit(_all_replies, input_path).result())


def _all_replies(input_path: str) -> list[bytes]:
    data = pickle.loads(Path(input_path).read_bytes())
    return [pod_chunk_reply(split_lines(chunk)) for path, chunk in data["stream"]
            if path == "/api/v1/pods"]


# --- the replay -------------------------------------------------------------------------------


class Content:
    """A watch stream fed chunk by chunk; a chunk counts as handled (``queue.join``) when
    the informer asks for the next one, so the replay never runs ahead of a chunk still
    waiting for the worker (the change ring keeps the recorded order in every mode)."""

    def __init__(self) -> None:
        self.queue: asyncio.Queue[bytes] = asyncio.Queue()
        self.taken = False

    async def readany(self) -> bytes:
        if self.taken:
            self.queue.task_done()
        chunk = await self.queue.get()
        self.taken = bool(chunk)
        if not chunk:
            self.queue.task_done()
        return chunk


class Transport(informers.ReplayTransport):
    async def get(self, path: str, params: list[tuple[str, str]], *,
                  accept: str | None = None) -> Any:
        if dict(params).get("watch"):
            content = self.contents[path] = Content()  # type: ignore[assignment]
            if len(self.contents) == len(self.pages):
                self.watching.set()
            return informers.PagesTransport.Page(b"", content)
        return await super().get(path, params, accept=accept)


async def chunks_of_lines(content: Any) -> AsyncIterator[list[bytes]]:
    """Each chunk's complete lines (stream_lines' splitting, a chunk at a time)."""
    pending: list[bytes] = []
    while chunk := await content.readany():
        *lines, rest = chunk.split(b"\n")
        if pending and lines:
            pending.append(lines[0])
            lines[0] = b"".join(pending)
            pending = []
        if rest:
            pending.append(rest)
        lines = [line for line in lines if line.strip()]
        if lines:
            yield lines


def precomputed(data: dict[str, Any]) -> dict[str, collections.deque[tuple[Any, ...]]]:
    """``free``: each Pod and EndpointSlice line's record or deleted key, built now, in
    stream order (a slice from its previous version, as the informer would)."""
    from netsight.graph.ingest.typed_events import DeletedEvent, decode_typed_event, event_record
    from netsight.graph.model.kinds import Kind, make_key

    out: dict[str, collections.deque[tuple[Any, ...]]] = collections.defaultdict(
        collections.deque)
    kinds = {"/api/v1/pods": (Kind.POD, "v1"),
             "/apis/discovery.k8s.io/v1/endpointslices": (Kind.ENDPOINT_SLICE,
                                                           "discovery.k8s.io/v1")}
    held: dict[str, Any] = {}
    for path, chunk in data["stream"]:
        if path not in kinds:
            continue
        kind, api_version = kinds[path]
        for line in chunk.split(b"\n"):
            if not line.strip():
                continue
            event = decode_typed_event(kind, line)
            assert event is not None, line[:200]
            meta = event.object.metadata
            key = make_key(kind, meta.namespace or "", meta.name)
            if isinstance(event, DeletedEvent):
                held.pop(key, None)
                out[path].append(("D", key, meta.resourceVersion or ""))
            else:
                record = held[key] = event_record(event, api_version, held.get(key))
                out[path].append(("R", record, meta.resourceVersion or ""))
    return out


def replay_main(args: argparse.Namespace) -> None:
    """One replay in this process, in one mode; prints its figures as JSON."""
    import netsight
    from netsight.graph.ingest import worker_rows
    from netsight.graph.ingest.informers import Informer, InformerSettings
    from netsight.graph.store.live import RELATED_LIMIT

    data = pickle.loads(Path(args.input).read_bytes())
    gc.disable()
    ready = precomputed(data) if args.mode == "free" else {}
    replies = replies_elsewhere(args.input) if args.mode == "rows" else None
    transport = Transport(data["pages"])
    store, informers_by_path = informers.replay_informers(data["kinds"], transport)
    events = [0]
    child: subprocess.Popen[bytes] | None = None
    streams: dict[str, Any] = {}

    async def watch_free(informer: Informer, resource_version: str) -> str:
        queue = ready[informer.kind.path]
        response = await transport.get(informer.kind.path, [("watch", "1")])
        async for lines in chunks_of_lines(response.content):
            for _ in lines:
                what, value, version = queue.popleft()
                if what == "D":
                    store.apply_deleted(value)
                else:
                    store.apply_record(value)
                informer.status.events += 1
                events[0] += 1
                resource_version = version or resource_version
        return resource_version

    lines_encoder = msgspec.msgpack.Encoder()
    reply_decoder = msgspec.msgpack.Decoder(Reply)

    async def watch_process(informer: Informer, resource_version: str) -> str:
        reader, writer = streams.get("reader"), streams.get("writer")
        response = await transport.get(informer.kind.path, [("watch", "1")])
        async for lines in chunks_of_lines(response.content):
            if replies is not None:  # rows: answered before the replay
                reply = reply_decoder.decode(replies.popleft())
            else:
                assert reader is not None
                assert writer is not None
                request = lines_encoder.encode(lines)
                writer.write(_FRAME.pack(len(request)) + request)
                (size,) = _FRAME.unpack(await reader.readexactly(_FRAME.size))
                reply = reply_decoder.decode(await reader.readexactly(size))
            records: Iterator[Any] = iter(worker_rows.decode(reply.page) if reply.page else ())
            deleted = iter(reply.deleted)
            for line, code, version in zip(lines, reply.codes, reply.versions, strict=True):
                if code == _RECORD:
                    store.apply_record(next(records))
                elif code == _DELETED:
                    namespace, name = next(deleted)
                    store.apply_deleted(informer._key(namespace, name))
                else:
                    resource_version = informer.handle_line(line, resource_version)
                    events[0] += 1
                    continue
                informer.status.events += 1
                resource_version = version or resource_version
                events[0] += 1
        return resource_version

    async def watch_inline(informer: Informer, resource_version: str) -> str:
        response = await transport.get(informer.kind.path, [("watch", "1")])
        handle = informer.handle_line
        async for lines in chunks_of_lines(response.content):
            for line in lines:
                resource_version = handle(line, resource_version)
                events[0] += 1
        return resource_version

    async def watch_counted(informer: Informer, resource_version: str) -> str:
        handle = informer.handle_line

        def counted(line: bytes, version: str) -> str:
            events[0] += 1
            return str(handle(line, version))

        informer.handle_line = counted  # type: ignore[method-assign,assignment]
        return await informer.watch(resource_version)

    async def replay() -> tuple[float, float]:
        nonlocal child
        versions = await asyncio.gather(*(i.list_and_reconcile()
                                          for i in informers_by_path.values()))
        if args.mode == "process":
            ours, theirs = socket.socketpair()
            child = subprocess.Popen(
                [sys.executable, __file__, "_child", str(theirs.fileno())],
                pass_fds=[theirs.fileno()])
            theirs.close()
            streams["reader"], streams["writer"] = await asyncio.open_connection(sock=ours)
        gc.freeze()
        gc.enable()
        collector = asyncio.create_task(informers.keep_young(InformerSettings()))
        watches = []
        for path, informer in informers_by_path.items():
            version = versions[list(informers_by_path).index(path)]
            if args.mode == "free" and path in ready:
                watches.append(asyncio.create_task(watch_free(informer, version)))
            elif args.mode in ("process", "rows") and informer.kind.kind_id == "Pod":
                watches.append(asyncio.create_task(watch_process(informer, version)))
            elif args.mode != "off":  # every other stream split alike in every mode
                watches.append(asyncio.create_task(watch_inline(informer, version)))
            else:
                watches.append(asyncio.create_task(watch_counted(informer, version)))
        await transport.watching.wait()
        if child is not None:  # an empty chunk's answer: the worker's imports are done
            request = lines_encoder.encode([])
            streams["writer"].write(_FRAME.pack(len(request)) + request)
            (size,) = _FRAME.unpack(await streams["reader"].readexactly(_FRAME.size))
            await streams["reader"].readexactly(size)
        worker0 = informers.cpu_seconds(child.pid) if child is not None else 0.0
        cpu0 = time.process_time()
        contents = transport.contents
        await informers.feed_recorded(data["stream"], contents)
        cpu = time.process_time() - cpu0
        worker = informers.cpu_seconds(child.pid) - worker0 if child is not None else 0.0
        for content in contents.values():
            content.queue.put_nowait(b"")
        await asyncio.gather(*watches)
        collector.cancel()
        if child is not None:
            streams["writer"].close()  # the worker's input ends: it exits
            await streams["writer"].wait_closed()
            child.wait(10)
        return cpu, worker

    cpu, worker = asyncio.run(replay())
    changes_sha256, edges = informers.graph_digests(store, RELATED_LIMIT)
    n = events[0]
    print(json.dumps({
        "netsight": str(Path(netsight.__file__).parent), "mode": args.mode, "events": n,
        "main_cpu_s": cpu, "main_us_per_event": cpu / n * 1e6,
        "worker_cpu_s": worker, "worker_us_per_event": worker / n * 1e6,
        "total_us_per_event": (cpu + worker) / n * 1e6,
        "generation": store.generation, "changes_sha256": changes_sha256,
        "edges_sha256": edges,
    }))


def command_run(args: argparse.Namespace) -> None:
    informers.snapshot_code()  # every replay runs copies: edits meanwhile cannot mix in
    script = informers.SNAPSHOT / "watch_worker.py"
    shutil.copy(__file__, script)
    source = informers.OUT / (f"informers-watch-input-{args.pods}-{args.seed}-"
                              f"{args.policies_per_namespace}-{args.events}-"
                              f"{args.churn_seed}-{args.batch}.pickle")
    if not source.exists():
        print(f"recording {args.events} watch events ...", file=sys.stderr, flush=True)
        informers.build_watch_input(args, source)
    code = informers.SNAPSHOT
    runs: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for n in range(args.runs):
        for mode in args.modes if n % 2 == 0 else list(reversed(args.modes)):
            done = subprocess.run(
                [sys.executable, str(script), "_replay", "--input",
                 str(source), "--mode", mode], capture_output=True, text=True, check=False,
                env={**informers.CHILD_ENV, "PYTHONPATH": str(code), "PYTHONHASHSEED": "0"})
            if done.returncode != 0:
                sys.exit(f"replay ({mode}) failed:\n{done.stderr[-5000:]}")
            result = json.loads(done.stdout.strip().splitlines()[-1])
            result["load_average_after"] = os.getloadavg()
            runs[mode].append(result)
            print(f"run {n + 1} {mode}: main {result['main_us_per_event']:.1f} us/event, "
                  f"worker {result['worker_us_per_event']:.1f}, total "
                  f"{result['total_us_per_event']:.1f} ({result['events']} events), load "
                  f"{result['load_average_after'][0]:.1f}", file=sys.stderr, flush=True)
    summary: dict[str, Any] = {}
    for mode, results in runs.items():
        summary[mode] = {
            key: round(statistics.median(r[key] for r in results), 1)
            for key in ("main_us_per_event", "worker_us_per_event", "total_us_per_event")}
        summary[mode]["main_us_per_event_runs"] = [
            round(r["main_us_per_event"], 1) for r in results]
        summary[mode]["digests"] = sorted({(r["changes_sha256"], r["edges_sha256"])
                                           for r in results})
    summary["same_graph"] = len({d for s in summary.values() if isinstance(s, dict)
                                 for d in s["digests"]}) == 1
    if "off" in runs:
        for mode in runs:
            if mode != "off":  # per alternated pair: this process's CPU against off's
                summary[mode]["main_ratio_by_pair"] = [
                    round(r["main_us_per_event"] / o["main_us_per_event"], 3)
                    for r, o in zip(runs[mode], runs["off"], strict=False)]
    summary["load_average"] = os.getloadavg()
    informers.save(args.name, {"machine": informers.machine(), "input": source.name,
                               "summary": summary, "runs": runs})
    print(json.dumps(summary, indent=1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(required=True)
    p = sub.add_parser("run", help="replay the recorded streams in each mode, alternated")
    p.add_argument("--pods", type=int, default=100_000)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--policies-per-namespace", type=int, default=40)
    p.add_argument("--events", type=int, default=30_000)
    p.add_argument("--churn-seed", type=int, default=1)
    p.add_argument("--batch", type=int, default=8,
                   help="watch lines per chunk in the recorded stream (at most)")
    p.add_argument("--runs", type=int, default=3, help="alternated rounds of every mode")
    p.add_argument("--modes", type=lambda s: s.split(","), default=list(MODES),
                   metavar="off,inline,rows,process,free")
    p.add_argument("--name", default="watch-worker")
    p.set_defaults(func=command_run)
    p = sub.add_parser("_replay")
    p.add_argument("--input", required=True)
    p.add_argument("--mode", choices=MODES, required=True)
    p.set_defaults(func=replay_main)
    p = sub.add_parser("_child")
    p.add_argument("fd", type=int)
    p.set_defaults(func=lambda args: child_main(args.fd))
    argv = sys.argv[1:]
    if not argv or argv[0] not in ("run", "_replay", "_child", "-h", "--help"):
        argv = ["run", *argv]
    args = parser.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
