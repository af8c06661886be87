"""Build the records of list pages in a worker process, on the second CPU.

A large initial sync spends most of the informers' CPU reading Pod pages (msgspec's parse
of several KB of JSON a pod, then the typed records, typed_records.py), and the rest
applying records to the graph, all on one core. :class:`PageWorker` hands each Pod page's
raw bytes to a child process, which reads it and sends back the records in the compact
form of worker_rows.py; the informer's process rebuilds them (a fraction of the cost of
reading the page) and applies them meanwhile. Pages are answered in the order sent, so an
informer can send the next page while it applies this one.

The worker is an optimisation only: a page it cannot read the typed way comes back as
"not typed" (the informer reads it the checked way, which reports the bad field), and once
the worker fails or dies, every page still waiting, and every later one, is built in the
informer's process from the bytes it kept (:class:`WorkerGone`).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import gc
import logging
import mmap
import multiprocessing
import os
import socket
import struct
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

import msgspec

from netsight.graph.ingest import worker_rows
from netsight.graph.ingest.typed_pages import list_page_records
from netsight.graph.model.records import Record

log = logging.getLogger(__name__)

# Replies: the page's records follow; the page needs the checked path; the worker failed.
# And once, first: the worker has imported what it needs and takes pages.
_RECORDS, _NOT_TYPED, _FAILED, _READY = b"R", b"N", b"F", b"H"
_HEADERS = msgspec.msgpack.Encoder()
_HEADER = msgspec.msgpack.Decoder(tuple[str, str, int])


class WorkerGone(Exception):
    """The worker process ended or failed; build pages in this process."""


def usable_cpus(cgroup: Path = Path("/sys/fs/cgroup")) -> int:
    """Whole CPUs this process may use: its affinity (a container's cpuset), capped by its
    cgroup's CPU quota (a pod's ``limits.cpu``: 500m leaves no second core to use)."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        cpus = os.cpu_count() or 1
    quota = _cpu_quota(cgroup)
    if quota is not None:
        cpus = min(cpus, max(1, int(quota)))
    return cpus


def _cpu_quota(cgroup: Path) -> float | None:
    """CPUs' worth of the cgroup's quota (v2 ``cpu.max``, v1 ``cpu.cfs_quota_us``), or None
    if there is none (or it cannot be read)."""
    try:
        quota, period = (cgroup / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else int(quota) / int(period)
    except (OSError, ValueError):
        pass
    try:
        quota_us = int((cgroup / "cpu" / "cpu.cfs_quota_us").read_text())
        period_us = int((cgroup / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return None if quota_us <= 0 or period_us <= 0 else quota_us / period_us


class PageWorker:
    """A child process building the records of list pages; used from one event loop."""

    def __init__(self) -> None:
        self._process: Any = None
        self._reader: asyncio.StreamReader | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._waiting: collections.deque[asyncio.Future[list[Record] | None]] = (
            collections.deque())
        self._replies: asyncio.Task[None] | None = None
        self._requests: socket.socket | None = None
        self._starting: asyncio.Task[None] | None = None
        self.failed: str | None = None
        self.started = False  # start() was called (or begun in the background)
        self._settled = asyncio.Event()  # ready, or failed
        self.ready = False  # the process runs and takes pages
        self.pages = 0  # pages whose records came from the worker

    @property
    def alive(self) -> bool:
        """Not failed nor closed (perhaps not started yet)."""
        return self.failed is None

    def start_for(self, metadata: dict[str, Any], min_objects: int) -> None:
        """Start the worker in the background if this list page says ``min_objects`` or
        more follow (or that pages follow, without a count); pages sent before it is
        ready are built by the caller."""
        if self.started or not self.alive or not metadata.get("continue"):
            return
        remaining = metadata.get("remainingItemCount")
        if type(remaining) is int and remaining < min_objects:
            return
        self.started = True
        self._starting = asyncio.create_task(self._start(), name="list-worker:start")

    async def wait_ready(self) -> bool:
        """Wait until the started worker takes pages (True) or has failed (False)."""
        await self._settled.wait()
        return self.ready

    async def _start(self) -> None:
        try:
            await self.start()
        except Exception as exc:  # no worker: every page is built in this process
            log.exception("starting the list worker failed")
            self._fail(f"could not start: {exc!r}")

    @property
    def backlog(self) -> int:
        """Pages sent and not answered yet."""
        return len(self._waiting)

    @property
    def pid(self) -> int:
        assert self._process is not None, "not started"
        pid: int = self._process.pid
        return pid

    @staticmethod
    def handles(kind_id: str) -> bool:
        return worker_rows.encodable(kind_id)

    async def start(self) -> None:
        """Start the child process (spawned: a fork would copy the event loop's threads
        and the graph); :attr:`ready` once it has imported what it needs.

        A page goes to the worker as a memfd (one copy, one write call) passed over a Unix
        socket: written through the event loop's stream, its megabytes would move one socket
        buffer per turn of the loop, while the loop is busy applying records, and the worker
        would wait for its input. Replies (a compact row a pod) are read by the loop.
        """
        self.started = True
        if not hasattr(os, "memfd_create"):
            raise OSError("memfd_create is not available")
        requests, theirs_requests = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours, theirs = multiprocessing.Pipe(duplex=True)  # a Unix socket pair, for replies
        context = multiprocessing.get_context("spawn")
        process = context.Process(target=serve, args=(theirs_requests, theirs),
                                  name="netsight-list-worker", daemon=True)
        try:
            process.start()
        finally:
            theirs.close()
            theirs_requests.close()
        self._process, self._requests = process, requests
        sock = socket.socket(fileno=os.dup(ours.fileno()))
        ours.close()
        self._reader, self._writer = await asyncio.open_connection(sock=sock)
        self._replies = asyncio.create_task(self._read_replies(), name="list-worker:replies")

    def submit(self, kind_id: str, api_version: str, body: bytes
               ) -> asyncio.Future[list[Record] | None]:
        """Send a page; the future gives its records, None if the page needs the checked
        path, or raises WorkerGone."""
        future: asyncio.Future[list[Record] | None] = (
            asyncio.get_running_loop().create_future())
        if not self.ready or not self.alive or self._requests is None:
            future.set_exception(WorkerGone(self.failed or "not ready"))
            return future
        header = _HEADERS.encode((kind_id, api_version, len(body)))
        try:
            fd = os.memfd_create("netsight-list-page", os.MFD_CLOEXEC)
            try:
                view = memoryview(body)
                while view:
                    view = view[os.write(fd, view):]
                socket.send_fds(self._requests, [header], [fd])
            finally:
                os.close(fd)
        except OSError as exc:  # the worker is gone (or memory is short): build it here
            self._fail(f"the worker process ended ({type(exc).__name__})"
                       if isinstance(exc, ConnectionError)  # as a failed read says it
                       else f"sending a page failed ({type(exc).__name__}: {exc})")
            future.set_exception(WorkerGone(self.failed or "gone"))
            return future
        self._waiting.append(future)
        return future

    async def _read_replies(self) -> None:
        assert self._reader is not None
        reader = self._reader
        try:
            (size,) = struct.unpack("!i", await reader.readexactly(4))
            if await reader.readexactly(size) != _READY:
                raise WorkerGone("the worker did not start")
            self.ready = True
            self._settled.set()
            while True:
                (size,) = struct.unpack("!i", await reader.readexactly(4))
                reply = await reader.readexactly(size)
                if not self._waiting:
                    raise WorkerGone("a reply nobody asked for")
                status = reply[:1]
                if status not in (_RECORDS, _NOT_TYPED):
                    # the page stays waiting: _fail hands it back to the informer
                    raise WorkerGone(reply[1:].decode(errors="replace") or "unknown reply")
                future = self._waiting.popleft()
                if future.done():  # cancelled: the informer built the page itself
                    continue
                result: list[Record] | None = None
                if status == _RECORDS:
                    result = worker_rows.decode(memoryview(reply)[1:])
                    self.pages += 1
                future.set_result(result)
        except (asyncio.IncompleteReadError, ConnectionError, OSError) as exc:
            self._fail(f"the worker process ended ({type(exc).__name__})")
        except WorkerGone as exc:
            self._fail(str(exc))
        except Exception as exc:  # a bug in decoding the reply: build in-process
            log.exception("reading the list worker's reply failed")
            self._fail(f"{type(exc).__name__}: {exc}")

    def give_up(self, reason: str) -> None:
        """Send it no more pages; the pages waiting for it are built by the informers."""
        self._fail(reason)

    def _fail(self, reason: str, *, quietly: bool = False) -> None:
        self.ready = False
        self._settled.set()
        if self.failed is None:
            self.failed = reason
            if not quietly:
                log.warning("list worker: %s; pages are built in this process", reason)
        while self._waiting:
            future = self._waiting.popleft()
            if not future.done():
                future.set_exception(WorkerGone(reason))

    async def close(self, timeout: float = 5.0) -> None:
        """Stop the worker (it exits when its input ends) and wait for it."""
        self._fail("closed", quietly=True)
        self.ready = False
        if self._requests is not None:  # the worker's input ends: it exits
            self._requests.close()
            self._requests = None
        starting, self._starting = self._starting, None
        if starting is not None:
            starting.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await starting
        if self._writer is not None:
            self._writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await self._writer.wait_closed()
            self._writer = None
        if self._replies is not None:
            self._replies.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._replies
            self._replies = None
        process, self._process = self._process, None
        if process is not None:
            await asyncio.get_running_loop().run_in_executor(None, process.join, timeout)
            if process.is_alive():
                process.kill()
                await asyncio.get_running_loop().run_in_executor(None, process.join, timeout)
            process.close()


def serve(requests: socket.socket, conn: Connection) -> None:
    """The worker process: read pages (memfds) until the input ends, answer each."""
    # The records of a page are freed with it and build no cycles: nothing to collect.
    gc.disable()
    try:
        conn.send_bytes(_READY)
    except OSError:
        return
    while True:
        try:
            header, fds, _, _ = socket.recv_fds(requests, 1024, 1)
        except OSError:
            return
        if not header:  # the informers' process closed its end
            return
        try:
            kind_id, api_version, size = _HEADER.decode(header)
            with contextlib.ExitStack() as stack:
                for fd in fds:
                    stack.callback(os.close, fd)
                body = memoryview(b"")
                if size:
                    mapped = mmap.mmap(fds[0], size, prot=mmap.PROT_READ)
                    stack.callback(mapped.close)
                    body = memoryview(mapped)
                    stack.callback(body.release)
                found = list_page_records(kind_id, body, api_version)
            reply = _NOT_TYPED if found is None else _RECORDS + worker_rows.encode(found[1])
        except Exception as exc:  # reported to the informer, which builds the page itself
            reply = _FAILED + f"{type(exc).__name__}: {exc}".encode()
        try:
            conn.send_bytes(reply)
        except OSError:
            return
