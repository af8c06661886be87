"""What explain_finding asks of the knowledge base, and how it reaches the tool.

The knowledge base does I/O (``netsight.knowledge``, a layer above the analyzers); tools
only see this interface. The server installs its knowledge base around each call
(:func:`using`), as the deadline is installed, so a tool takes no extra argument and the
CLI, which has none, gets ``None`` from :func:`current` and answers without history.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True, slots=True)
class Query:
    """One explanation asked for: by ``signature`` or, for every signature of a code, by
    ``code``. ``namespaces``: the only namespaces whose occurrences the caller may see
    (None: all)."""

    signature: str | None
    code: str | None
    namespaces: frozenset[str] | None
    recent: int  # occurrences to list at most


@dataclass(frozen=True, slots=True)
class Occurrence:
    object: str  # Kind/namespace/name
    cluster: str
    appeared: float
    last_seen: float
    resolved: float | None
    resolution: str | None  # "fix", "coincidence", "unobserved"; None while open


@dataclass(frozen=True, slots=True)
class LearnedFix:
    fix: str  # the abstracted changes, as one line
    changes: tuple[str, ...]
    count: int  # occurrences it resolved
    last: float
    clusters: int


@dataclass(frozen=True, slots=True)
class Note:
    text: str
    author: str
    at: float


@dataclass(frozen=True, slots=True)
class Explanation:
    signature: str | None
    code: str | None
    pattern: str | None  # the normalised text; None when the signature was never seen
    first_seen: float | None
    last_seen: float | None
    occurrences: int  # visible to the caller
    open: int  # of which still open: objects affected now
    clusters: int
    resolutions: int  # fixes among the visible occurrences' endings
    coincidences: int
    fixes: tuple[LearnedFix, ...] = ()
    notes: tuple[Note, ...] = ()
    recent: tuple[Occurrence, ...] = ()


class KnowledgeReader(Protocol):
    """The knowledge base as tools read and annotate it."""

    cluster: str

    async def explain(self, query: Query) -> Explanation | None:
        """None when the signature is not in the store (never observed anywhere)."""
        ...

    async def add_note(self, signature: str, code: str, pattern: str, text: str,
                       author: str, namespace: str) -> bool:
        """Queue an operator's note; False when the write queue is full (dropped)."""
        ...


_READER: ContextVar[KnowledgeReader | None] = ContextVar("netsight_knowledge", default=None)


@contextlib.contextmanager
def using(reader: KnowledgeReader | None) -> Iterator[None]:
    token = _READER.set(reader)
    try:
        yield
    finally:
        _READER.reset(token)


def current() -> KnowledgeReader | None:
    return _READER.get()


def confidence(count: int, resolutions: int) -> float:
    """How much to trust a fix that resolved ``count`` of a signature's ``resolutions``
    fixed occurrences: its share, discounted for few observations (one in one is 0.5, two
    in two 0.67, ten in ten 0.91), so each repeat raises it and a rival fix lowers it."""
    if count <= 0:
        return 0.0
    return round(count / (resolutions + 1), 2)
