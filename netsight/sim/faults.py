"""Misbehaviour to inject into the simulated API server, as a real one or its network
sometimes shows it: latency, failed requests, 403s, stalled watches, slow bodies."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Failure:
    status: int
    remaining: int
    path_contains: str = ""
    watch_only: bool = False


@dataclass
class Faults:
    """What the server does wrong now; every request and watch stream reads it."""

    latency: float = 0.0  # seconds added to every request
    failures: list[Failure] = field(default_factory=list)
    forbidden: set[str] = field(default_factory=set)  # plurals answered with 403
    stalled: bool = False  # watches stay open but send nothing (events wait), not even bookmarks
    # Seconds between the pieces of every answer: a list's body goes out a piece at a
    # time, a watch stream waits this long before each write (a slow link or server).
    slow_body: float = 0.0

    def fail(self, status: int, count: int = 1, *, path_contains: str = "",
             watch_only: bool = False) -> None:
        self.failures.append(Failure(status, count, path_contains, watch_only))

    def take_failure(self, path: str, *, watch: bool) -> int | None:
        for failure in self.failures:
            if failure.path_contains in path and (watch or not failure.watch_only):
                failure.remaining -= 1
                if failure.remaining <= 0:
                    self.failures.remove(failure)
                return failure.status
        return None
