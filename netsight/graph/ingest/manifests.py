"""Build a graph from manifest files: the offline source for CI pipelines and tests.

Accepts files, directories (recursively: ``*.yaml``, ``*.yml``, ``*.json``) and ``-`` for
stdin; multi-document YAML, JSON, ``List`` kinds (``kubectl get -o yaml`` output) and the
empty or comment-only documents Helm emits. A document that does not parse, or is not a
Kubernetes object, becomes an :class:`IngestProblem` with its file and line; the other
documents still load. A mapping that gives a key twice is refused, as kubectl refuses it.
"""

from __future__ import annotations

import contextlib
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
import yaml

from netsight.graph.model.errors import MalformedObject
from netsight.graph.model.lists import expand_lists
from netsight.graph.model.reading import object_id
from netsight.graph.model.yaml_keys import DuplicateKey, Loader
from netsight.graph.runtime.collector import paused_gc
from netsight.graph.store.live import EventType, GraphStore, IngestProblem, ProblemKind

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
_SEPARATOR = re.compile(r"^---[ \t]*(?:#.*)?$")


@dataclass(frozen=True, slots=True)
class Document:
    location: str  # "path:line"
    body: object  # the parsed document, or the exception that stopped parsing it


@dataclass(frozen=True, slots=True)
class LoadReport:
    files: int
    documents: int
    objects: int
    problems: int


def manifest_files(paths: Iterable[str]) -> list[str]:
    """Expand directories; raise FileNotFoundError naming the first path that does not exist."""
    found: list[str] = []
    for raw in paths:
        if raw == "-":
            found.append(raw)
            continue
        path = Path(raw)
        if path.is_dir():
            found.extend(
                str(p) for p in sorted(path.rglob("*"))
                if p.is_file() and p.suffix in MANIFEST_SUFFIXES
            )
        elif path.is_file():
            found.append(str(path))
        else:
            raise FileNotFoundError(raw)
    return found


def read_documents(name: str, text: str) -> Iterator[Document]:
    """Parse one file's text into documents, each independently of the others."""
    stripped = text.lstrip()
    if name.endswith(".json") or stripped.startswith(("{", "[")):
        # Fall through to YAML on failure: a superset of JSON whose errors carry a line.
        with contextlib.suppress(orjson.JSONDecodeError):
            yield Document(f"{name}:1", orjson.loads(text))
            return
    for start, line, chunk in _split_yaml(text):
        try:
            body = yaml.load(chunk, Loader=Loader)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            at = start + mark.line if mark is not None else line
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            if isinstance(exc, DuplicateKey):
                problem = exc.describe(start)
            yield Document(f"{name}:{at}", ValueError(f"invalid YAML: {problem}"))
            continue
        except ValueError as exc:
            # Well-formed YAML holding a value Python cannot make: an integer past the
            # int-from-text digit limit, a date that does not exist.
            yield Document(f"{name}:{line}", ValueError(f"invalid YAML: {str(exc)[:200]}"))
            continue
        if body is not None:
            yield Document(f"{name}:{line}", body)


def _split_yaml(text: str) -> Iterator[tuple[int, int, str]]:
    """Split a YAML stream at ``---`` lines.

    Yields (the document's first line, its first line of content — past leading comments,
    where a reader would look — and the document text).
    """
    start, content, lines = 1, 0, list[str]()
    for number, line in enumerate(text.splitlines(), start=1):
        if _SEPARATOR.match(line) or line.rstrip() == "...":
            if lines:
                yield start, content or start, "\n".join(lines)
            start, content, lines = number + 1, 0, []
        else:
            lines.append(line)
            stripped = line.strip()
            if not content and stripped and not stripped.startswith("#"):
                content = number
    if lines:
        yield start, content or start, "\n".join(lines)


def load_manifests(
    store: GraphStore, paths: Iterable[str], *, stdin: IO[str] | None = None
) -> LoadReport:
    with paused_gc():
        return _load(store, paths, stdin)


def _load(store: GraphStore, paths: Iterable[str], stdin: IO[str] | None) -> LoadReport:
    files = manifest_files(paths)
    seen: set[str] = set()
    documents = objects = 0
    problems_before = len(store.problems)
    for name in files:
        if name == "-":
            text, label = (stdin or sys.stdin).read(), "<stdin>"
        else:
            text, label = Path(name).read_text(encoding="utf-8", errors="replace"), name
        for document in read_documents(label, text):
            documents += 1
            if isinstance(document.body, Exception):
                store.note_problem(
                    IngestProblem(ProblemKind.UNPARSEABLE, str(document.body),
                                  location=document.location)
                )
                continue
            for index, item in enumerate(expand_lists(document.body)):
                location = document.location if index == 0 else f"{document.location}[{index}]"
                objects += _load_object(store, item, location, seen)
    return LoadReport(len(files), documents, objects, len(store.problems) - problems_before)


def _load_object(store: GraphStore, item: object, location: str, seen: set[str]) -> int:
    if not isinstance(item, dict):
        store.note_problem(
            IngestProblem(
                ProblemKind.NOT_AN_OBJECT,
                f"expected a Kubernetes object (a map with apiVersion, kind, metadata), "
                f"got {type(item).__name__}",
                location=location,
            )
        )
        return 0
    raw: dict[str, Any] = item
    try:
        key = object_id(raw).key
    except MalformedObject:
        key = None  # apply() records the problem with its field path
    if key is not None and key in seen:
        oid = object_id(raw)
        store.note_problem(
            IngestProblem(
                ProblemKind.DUPLICATE,
                f"defined more than once; the definition at {location} replaces the earlier one",
                location=location, object_kind=oid.kind, namespace=oid.namespace,
                name=oid.name, api_version=str(raw.get("apiVersion")),
            )
        )
    if key is not None:
        seen.add(key)
    store.apply(EventType.ADDED, raw, location=location)
    return 1
