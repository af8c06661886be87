"""A time limit for one analyzer run, checked cooperatively in the analyzers' long loops.

Analyzers are synchronous and run on the server's event loop, where nothing can interrupt
them: a call over ``TOOL_TIMEOUT`` would hold the loop (every other call, the informers) until
it finished. Instead the caller sets a deadline around the run (:func:`within`) and the long
loops call :func:`check`, which raises :class:`DeadlineExceeded` once it has passed — with
the items finished so far, where the loop has any an agent could use.

The deadline lives in a context variable, so analyzers take no extra argument and the
netsight CLI (no deadline set) pays one lookup per check.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

T = TypeVar("T")

# (when, seconds, clock): the clock is time.monotonic but for tests
_DEADLINE: ContextVar[tuple[float, float, Callable[[], float]] | None] = ContextVar(
    "netsight_deadline", default=None)


class DeadlineExceeded(Exception):
    """The run passed its deadline; ``finished`` holds the items it completed, if any."""

    def __init__(self, seconds: float, finished: Sequence[Any] = ()) -> None:
        super().__init__(f"deadline of {seconds:g}s passed")
        self.seconds = seconds
        self.finished = list(finished)


@contextlib.contextmanager
def within(seconds: float, *, clock: Callable[[], float] = time.monotonic) -> Iterator[None]:
    """Runs inside this block must finish within ``seconds`` (from now, by ``clock``)."""
    token = _DEADLINE.set((clock() + seconds, seconds, clock))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def check(finished: Callable[[], Sequence[Any]] | None = None) -> None:
    """Raises DeadlineExceeded if the current deadline has passed; ``finished`` gives the
    items completed so far (called only then)."""
    deadline = _DEADLINE.get()
    if deadline is not None and deadline[2]() > deadline[0]:
        raise DeadlineExceeded(deadline[1], finished() if finished is not None else ())


def checked(items: Iterable[T], every: int = 1) -> Iterator[T]:
    """``items``, checking the deadline before each; with ``every``, before every
    ``every``-th only, so a loop over few items (a quick call) is never cut."""
    if every == 1:
        for item in items:
            check()
            yield item
        return
    for index, item in enumerate(items, start=1):
        if not index % every:
            check()
        yield item
