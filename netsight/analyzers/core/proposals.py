"""The objects of a what-if question (``proposed``), read into an overlay delta.

The text is read as manifests are (multi-document YAML, JSON, ``List`` kinds), within
bounds on its size once YAML aliases are expanded (``proposal_reading.py``), and each object
into a record by the code the graph uses (``records.to_record``), but a proposal is a tool
argument, not cluster input: anything that cannot be read is the caller's to fix, so it
fails the call (INVALID_INPUT naming ``proposed``, the document and its line) instead of
becoming a finding. So does what the asking tool refuses (:class:`Admits`): a kind it does
not evaluate, or, for routing, an object that names one in a namespace the caller may not
read where none of their live objects does (``routing/proposal_scope.py``).

An object replaces the live object with the same kind, namespace and name, or is added.
A document whose ``metadata.annotations`` holds ``netsight.io/delete: "true"`` deletes the
object it names (only apiVersion, kind and metadata are read). A replacement without
``metadata.creationTimestamp`` keeps the live object's, as an update by ``kubectl apply``
would; an added object has none, so it is the newest wherever age breaks a tie.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from netsight.analyzers.core import deadline
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.core.proposal_reading import Document, TooLarge, documents
from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.kinds import parse_key
from netsight.graph.model.lists import expand_lists
from netsight.graph.model.reading import object_id, to_record
from netsight.graph.model.records import Record, invalid_values
from netsight.graph.store.live import GraphView
from netsight.graph.store.overlay import OverlayView

MAX_BYTES = 1 << 20
MAX_OBJECTS = 100
DELETE_ANNOTATION = "netsight.io/delete"

ADD, REPLACE, DELETE, UNCHANGED = "add", "replace", "delete", "unchanged"


@dataclass(frozen=True, slots=True)
class Admits:
    """What a tool takes in a proposal; each says why not, or None."""

    # (kind id, apiVersion) of every object, deletions too
    kind: Callable[[str, str], str | None] = lambda kind, api_version: None
    # each added or replacing record
    record: Callable[[Record], str | None] = lambda record: None


@dataclass
class Proposal:
    delta: dict[str, Record | None] = field(default_factory=dict)
    actions: dict[str, str] = field(default_factory=dict)  # key -> ADD, REPLACE, ...
    notes: list[str] = field(default_factory=list)

    def overlay(self, view: GraphView) -> OverlayView:
        return OverlayView(view, self.delta)


def read_ahead(text: str) -> list[Document] | None:
    """The documents of ``text``, read without the graph: the part of :func:`read` whose
    time grows with the text (composing YAML, in C, cannot stop at a deadline), which a
    server does off its event loop. None for a text :func:`read` refuses unread."""
    try:
        size = len(text.encode())
    except UnicodeEncodeError:
        return None
    return list(documents(text)) if size <= MAX_BYTES else None


def read(view: GraphView, text: str, *, tool: str, shows: Callable[[str], bool],
         admits: Admits = Admits(), ahead: Sequence[Document] | None = None) -> Proposal:
    """Parse ``text`` against ``view`` (the live graph); ``shows`` tells whether the caller
    may see an object (a proposal may not reach into namespaces it may not read); ``admits``:
    what the tool takes; ``ahead``: its documents, where :func:`read_ahead` read them
    already."""
    try:
        size = len(text.encode())
    except UnicodeEncodeError as exc:  # a lone surrogate (a JSON escape let it through)
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"proposed: character {exc.start} is a "
                          "lone surrogate, which UTF-8 cannot hold; send Unicode text",
                          tool=tool) from None
    if size > MAX_BYTES:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"proposed: {size} bytes; at most "
                          f"{MAX_BYTES} (1 MiB) are read: propose fewer objects at a time",
                          tool=tool)
    proposal = Proposal()
    where: dict[str, str] = {}
    for number, document in enumerate(documents(text) if ahead is None else ahead, start=1):
        at = f"proposed: document {number} (line {document.line})"
        if isinstance(document.body, TooLarge):
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"{at}: {document.body}; propose fewer "
                              "or smaller objects", tool=tool)
        if isinstance(document.body, Exception):
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"{at}: {document.body}", tool=tool)
        for index, item in enumerate(deadline.checked(expand_lists(document.body))):
            here = at if index == 0 else f"{at} item {index}"
            if len(where) == MAX_OBJECTS:
                raise ToolFailure(ErrorCode.INVALID_INPUT, f"{here}: more than {MAX_OBJECTS} "
                                  "objects; propose fewer at a time", tool=tool)
            key = _read_one(view, proposal, item, here, tool=tool, shows=shows,
                             admits=admits, seen=where)
            where[key] = here
    if not where:
        raise ToolFailure(ErrorCode.INVALID_INPUT, "proposed: no object found; give one or "
                          "more Kubernetes objects as YAML or JSON", tool=tool)
    return proposal


def _read_one(view: GraphView, proposal: Proposal, item: object, at: str, *, tool: str,
              shows: Callable[[str], bool], admits: Admits, seen: Mapping[str, str]) -> str:
    def fail(message: str) -> ToolFailure:
        return ToolFailure(ErrorCode.INVALID_INPUT, f"{at}: {message}", tool=tool)

    if not isinstance(item, dict):
        raise fail(f"expected a Kubernetes object (a map with apiVersion, kind, metadata), "
                   f"got {type(item).__name__}")
    raw: dict[str, Any] = item
    try:
        key = object_id(raw).key
    except MalformedObject as exc:
        raise fail(f"{exc.field_path}: {exc.message}") from None
    if key in seen:
        raise fail(f"{key} is already proposed by {seen[key].removeprefix('proposed: ')}")
    if not shows(key):
        raise fail(f"{key} is in a namespace you may not read")
    why = admits.kind(parse_key(key).kind, str(raw.get("apiVersion")))
    if why is not None:
        raise fail(why)
    live = view.get(key)
    metadata = raw.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    if isinstance(annotations, dict) and annotations.get(DELETE_ANNOTATION) == "true":
        if live is None:
            raise fail(f"deletes {key}, which does not exist")
        proposal.delta[key] = None
        proposal.actions[key] = DELETE
        return key
    if live is not None and isinstance(metadata, dict) and live.created \
            and not metadata.get("creationTimestamp"):
        raw = {**raw, "metadata": {**metadata, "creationTimestamp": live.created}}
    try:
        record = to_record(raw)
    except MalformedObject as exc:
        raise fail(f"{exc.field_path}: {exc.message}") from None
    except Exception as exc:  # a reader bug: the caller's object is refused, not the call
        raise fail(f"netsight could not read this object ({type(exc).__name__})") from None
    why = admits.record(record)
    if why is not None:
        raise fail(why)
    for note in invalid_values(record):
        proposal.notes.append(f"proposed {key} {note.field_path}: {note.message} (kept as "
                              "written)")
    proposal.delta[key] = record
    proposal.actions[key] = ADD if live is None else UNCHANGED if live == record else REPLACE
    return key
