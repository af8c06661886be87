"""Reading a watch stream: its lines, however the chunks split them, under an inactivity
timeout (a silent stream is a dead stream), shorter once the server has sent a line and
owes bookmarks."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import AsyncIterator

from netsight.graph.ingest.api_responses import Response, Stalled


def watch_params(resource_version: str, timeout: tuple[int, int]) -> list[tuple[str, str]]:
    """A watch from ``resource_version``, with bookmarks, that the server ends after a time
    drawn from ``timeout`` (seconds): watches started together do not all end together."""
    return [("watch", "1"), ("resourceVersion", resource_version),
            ("allowWatchBookmarks", "true"),
            ("timeoutSeconds", str(random.randint(*timeout)))]


def not_older_than(resource_version: str) -> list[tuple[str, str]]:
    """A list of at most one object, at ``resource_version`` or later: what a watch resumed
    from it needs the server to have reached. A paged read goes to etcd, which answers at
    once (504 "Too large resource version" if it is behind), not from the watch cache."""
    return [("limit", "1"), ("resourceVersion", resource_version),
            ("resourceVersionMatch", "NotOlderThan")]


def went_back(before: str | None, now: str) -> bool:
    """Whether a list's resourceVersion is lower than one seen before it. They are opaque to
    clients, but every API server backed by etcd gives its revision, which only grows: a
    lower one means the storage was restored from a backup (or is another cluster)."""
    try:
        return before is not None and int(now) < int(before)
    except ValueError:  # not a number after all: nothing can be said
        return False


_CLOCK_RESOLUTION = time.get_clock_info("monotonic").resolution
# A timer this late found the loop held: it was not listening to the stream meanwhile.
_LATE = 0.05


class _Inactivity:
    """Cancels the reading task once one read has waited ``seconds`` (a stalled stream).

    ``asyncio.timeout`` around every read costs a timer handle, a context and a heap push
    per chunk, on a stream that hands over thousands of chunks a second; this re-arms one
    timer only when it fires. A firing timer looks at the read then in progress: none (the
    lines are being applied) and the next read arms it again; one that began less than
    ``seconds`` ago, and it waits for the rest; else the task is cancelled, as
    ``asyncio.timeout`` would, and the reader turns that cancellation into a timeout.
    """

    __slots__ = ("_cancelling", "_graced", "_handle", "_loop", "_task", "began", "expired",
                 "seconds", "waiting")

    def __init__(self, seconds: float) -> None:
        self._loop = asyncio.get_running_loop()
        task = asyncio.current_task()
        assert task is not None  # called from a coroutine
        self._task = task
        self._cancelling = task.cancelling()  # cancellations already requested by others
        self._handle: asyncio.TimerHandle | None = None
        self.seconds = seconds
        self.began = self._graced = 0.0
        self.waiting = self.expired = False

    def reading(self) -> None:
        """A read begins."""
        self.began = began = self._loop.time()
        self.waiting = True
        if self._handle is None:
            self._handle = self._loop.call_at(began + self.seconds, self._check)

    def shorten(self, seconds: float) -> None:
        """From the next read on, allow only ``seconds`` of silence."""
        self.seconds = seconds
        self.close()  # the timer set for the longer bound; the next read sets one

    def _check(self) -> None:
        self._handle = None
        if not self.waiting:
            return
        now, due = self._loop.time(), self.began + self.seconds
        # The loop runs a timer up to its clock's resolution early.
        if now < due - _CLOCK_RESOLUTION:
            self._handle = self._loop.call_at(due, self._check)
            return
        late = now - due
        if late > _LATE and self._graced != self.began:
            # Something held the loop past the deadline: bytes that came meanwhile may not
            # be read yet, and silence nobody listened to is no evidence. Once per read,
            # listen as long again (up to half the bound) before calling it a stall.
            self._graced = self.began
            self._handle = self._loop.call_at(now + min(late, self.seconds / 2), self._check)
            return
        self.expired = True
        self._task.cancel()

    def timed_out(self) -> bool:
        """For a CancelledError out of a read: True if this timer caused it alone (then
        the cancellation is withdrawn), False if someone else cancelled the task too."""
        return self.expired and self._task.uncancel() <= self._cancelling

    def close(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None


async def stream_lines(response: Response, inactivity: float, stall: float | None = None
                       ) -> AsyncIterator[bytes]:
    """The lines of a watch stream; Stalled if no byte arrives for ``inactivity`` seconds,
    or, from the first line on, for ``stall`` seconds (a server that has sent a watch
    something past its start sends bookmarks from then on)."""
    # Split chunks ourselves: StreamReader.readline caps a line at 128 KiB, and one large
    # object (a CRD with a big spec) would break it.
    # The unfinished line is kept as pieces: a large object arriving in many chunks is
    # joined once, not copied again with every chunk.
    pending: list[bytes] = []
    content = response.content
    timer = _Inactivity(inactivity)
    try:
        while True:
            timer.reading()
            try:
                chunk = await content.readany()
            except asyncio.CancelledError:
                if timer.timed_out():
                    raise Stalled(f"no data for {timer.seconds:g}s: the stream stalled"
                                  ) from None
                raise
            finally:
                timer.waiting = False
            if not chunk:
                break
            # Lines found with find (memchr), not split: bytes.split walks the chunk a byte
            # at a time, and a pod's line is several KB.
            end = chunk.find(b"\n")
            if end < 0:
                pending.append(chunk)
                continue
            if stall is not None:  # the first line: bookmarks are due from now on
                timer.shorten(stall)
                stall = None
            if pending:
                pending.append(chunk[:end])
                line = b"".join(pending)
                pending = []
            else:
                line = chunk[:end]
            start = end + 1
            while True:
                if line.strip():
                    yield line
                end = chunk.find(b"\n", start)
                if end < 0:
                    break
                line = chunk[start:end]
                start = end + 1
            if start < len(chunk):
                pending.append(chunk[start:])
    finally:
        timer.close()
    tail = b"".join(pending)
    if tail.strip():
        yield tail
