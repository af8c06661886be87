"""A progress line per phase on stderr, redrawn in place on a terminal, a line per step
otherwise (CI logs): tqdm is not a dependency, and a phase needs no more than this."""

from __future__ import annotations

import sys
import time
from typing import IO

from benchmarks.context import ProgressBar

WIDTH = 24


class Bar:
    """``phase [#####-----] 12/24 3.1s``: redrawn at most 10 times a second."""

    def __init__(self, phase: str, total: int | None, stream: IO[str] | None = None) -> None:
        self.phase, self.total, self.done = phase, total, 0
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.started = self.drawn = time.monotonic()
        self.closed = False
        if self.live:
            self._draw()

    def advance(self, steps: int = 1) -> None:
        self.done += steps
        now = time.monotonic()
        if self.live and now - self.drawn >= 0.1:
            self.drawn = now
            self._draw()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self._draw(end="\n")

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _draw(self, end: str = "") -> None:
        elapsed = time.monotonic() - self.started
        if self.total:
            filled = min(WIDTH, WIDTH * self.done // self.total)
            bar = f"[{'#' * filled}{'-' * (WIDTH - filled)}] {self.done}/{self.total}"
        else:
            bar = f"{self.done}"
        prefix = "\r\x1b[K" if self.live else ""
        self.stream.write(f"{prefix}{self.phase:<28} {bar} {elapsed:.1f}s{end}")
        self.stream.flush()


def progress(phase: str, total: int | None) -> ProgressBar:
    return Bar(phase, total)
