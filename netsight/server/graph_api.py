"""``GET /api/graph``: the live graph as node-link JSON, for dashboards and scripts.

The shape is networkx's node-link format (``networkx.node_link_graph(data, edges="links")``
reads it back): nodes carry ``id`` (the node key), ``kind``, ``namespace`` and ``name``; a
link is one relationship, ``source --type--> target``, so two objects related twice have two
links (hence ``multigraph: true``, the relationship doubling as the link ``key``).

Filters: ``namespace``, ``kind`` (repeatable or comma-separated), and
``around=Kind/namespace/name&depth=N`` (the neighbourhood within N hops, either direction).

The body is streamed in chunks, reading the live graph between them rather than copying it,
so a 100k-pod export neither doubles the memory nor stalls the loop: what it holds from
chunk to chunk is the key list and each written node's encoded key (copied out of orjson's
write buffer), and it trims the heap when done (benchmarks/export_memory.py). Informer
events may land between chunks: nodes are written first, then only the links between
written nodes, so the document is always self-consistent — it holds generation
``graph.generation`` and perhaps some later changes, which
``/api/graph/changes?since=<generation>`` replays idempotently.
``ETag`` is the graph generation (with a per-process prefix: generations restart with the
process), and ``If-None-Match`` answers 304 while nothing changed.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterable
from dataclasses import dataclass

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse

from netsight.analyzers.core.base import did_you_mean, require_watched
from netsight.analyzers.core.contracts import ErrorCode, ToolError, ToolFailure
from netsight.analyzers.core.object_names import DNS_LABEL
from netsight.graph.model.kinds import Kind, Rel, parse_key
from netsight.graph.runtime.allocator import release_free_memory
from netsight.graph.store.live import GraphStore, GraphView
from netsight.graph.store.scoped import ScopedView
from netsight.server.auth import view_for
from netsight.server.request_limits import whole_number

ENDPOINT = "/api/graph"
MAX_DEPTH = 5
MAX_AROUND_NODES = 20_000
CHUNK = 2_000  # nodes serialised between two yields to the loop
LINK_CHUNK = 10_000  # links likewise
RELEASE_AFTER = 20_000  # nodes: an export this large gives its memory back when done

BOOT = uuid.uuid4().hex[:8]


class BadFilter(ValueError):
    def __init__(self, code: ErrorCode, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.code, self.status = code, status


@dataclass(frozen=True, slots=True)
class Selection:
    namespace: str | None = None
    kinds: frozenset[str] | None = None
    around: str | None = None
    depth: int = 1


def etag(store: GraphStore) -> str:
    return f'"{BOOT}.{store.generation}"'


def not_modified(request: Request, tag: str) -> bool:
    header = request.headers.get("if-none-match")
    if not header:
        return False
    candidates = {c.strip().removeprefix("W/") for c in header.split(",")}
    return "*" in candidates or tag in candidates


def error_response(exc: BadFilter, tool: str = ENDPOINT) -> JSONResponse:
    body = ToolError(code=exc.code, message=str(exc), tool=tool).model_dump(mode="json")
    return JSONResponse(body, status_code=exc.status)


def parse_selection(request: Request, view: GraphView, known_kinds: Iterable[str]
                    ) -> Selection:
    params = request.query_params
    unknown = set(params) - {"namespace", "kind", "around", "depth"}
    if unknown:
        raise BadFilter(ErrorCode.INVALID_INPUT, f"unknown parameter {sorted(unknown)[0]!r}; "
                        "filters are namespace, kind, around and depth")
    namespace = params.get("namespace")
    if namespace is not None and (len(namespace) > 63 or not DNS_LABEL.fullmatch(namespace)):
        raise BadFilter(ErrorCode.INVALID_INPUT, f"namespace: {namespace!r} is not a namespace "
                        "name (lowercase letters, digits and '-')")
    _watched(view, namespace, "namespace")
    kinds: frozenset[str] | None = None
    given = [k.strip() for value in params.getlist("kind") for k in value.split(",") if k.strip()]
    if given:
        known = {str(k) for k in (*known_kinds, *Kind, *view.kinds())}
        for kind in given:
            if kind not in known:
                raise BadFilter(ErrorCode.INVALID_INPUT, f"kind: unknown kind {kind!r}"
                                f"{did_you_mean(kind, known)}")
        kinds = frozenset(given)
    around = params.get("around")
    depth_text = params.get("depth")
    if depth_text is not None and around is None:
        raise BadFilter(ErrorCode.INVALID_INPUT, "depth: only meaningful with around=Kind/ns/name")
    depth = 1
    if depth_text is not None:
        hops = whole_number(depth_text)
        if hops is None or hops > MAX_DEPTH:
            raise BadFilter(ErrorCode.INVALID_INPUT,
                            f"depth: a whole number 0-{MAX_DEPTH}; got {depth_text[:20]!r}")
        depth = hops
    if around is not None:
        if around.count("/") not in (1, 2) or not all(around.split("/")):
            raise BadFilter(ErrorCode.INVALID_INPUT, f"around: 'Kind/namespace/name' or "
                            f"'Kind/name' for cluster-scoped objects; got {around!r}")
        _watched(view, parse_key(around).namespace or None, "around")
        if not view.exists(around):
            raise BadFilter(ErrorCode.NOT_FOUND, f"around: no object {around!r} in the graph",
                            status=404)
    return Selection(namespace, kinds, around, depth)


def _watched(view: GraphView, namespace: str | None, argument: str) -> None:
    """A namespace outside NAMESPACE is unknown, not empty: refused as the tools refuse it."""
    try:
        require_watched(view, namespace, argument=argument, tool=ENDPOINT)
    except ToolFailure as failure:
        raise BadFilter(failure.code, failure.message) from None


def select_keys(view: GraphView, selection: Selection) -> list[str]:
    """The keys to export; a list of keys, never a copy of records or edges."""
    if selection.around is not None:
        keys: Iterable[str] = _neighbourhood(view, selection.around, selection.depth)
        wanted = selection.kinds
        ns = selection.namespace
        return [k for k in keys if (wanted is None or parse_key(k).kind in wanted)
                and (ns is None or parse_key(k).namespace == ns)]
    kinds = sorted(selection.kinds) if selection.kinds is not None else view.kinds()
    return [record.key for kind in kinds for record in view.for_each(kind, selection.namespace)]


def _neighbourhood(view: GraphView, start: str, depth: int) -> list[str]:
    seen = {start}
    order = [start]
    frontier = [start]
    for _ in range(depth):
        nxt: list[str] = []
        for key in frontier:
            for other in view.adjacent_keys(key):
                if other not in seen and len(seen) < MAX_AROUND_NODES:
                    seen.add(other)
                    order.append(other)
                    nxt.append(other)
        frontier = nxt
    return order


async def export(view: GraphView, keys: list[str], header: dict[str, object], *,
                 chunk: int = CHUNK, link_chunk: int = LINK_CHUNK) -> AsyncIterator[bytes]:
    """The node-link document in chunks, yielding to the loop between them.

    Written as JSON fragments rather than a dict per node and per link: each key is encoded
    once, when its node is written, and copied into every link naming it; the parts shared
    by many nodes (kind and namespace) and links (the relationship) are encoded once per
    export. The bytes are those ``orjson.dumps`` gives the same dicts."""
    head = orjson.dumps({"directed": True, "multigraph": True, "graph": header})
    yield head[:-1] + b',"nodes":['
    written: dict[str, bytes] = {}  # key -> its JSON string, for the nodes written
    middles: dict[tuple[str, str], bytes] = {}  # (kind, namespace) -> their fields
    separator = b""
    for start in range(0, len(keys), chunk):
        nodes: list[bytes] = []
        for key in keys[start:start + chunk]:
            record = view.get(key)
            if record is None:  # deleted since the export began
                continue
            # A copy: orjson hands back a bytes object that keeps its 4 KiB write buffer,
            # and ``written`` holds one per node to the end of the export.
            encoded = written[key] = memoryview(orjson.dumps(key)).tobytes()
            middle = middles.get((record.kind, record.namespace))
            if middle is None:
                middle = middles[record.kind, record.namespace] = (
                    b',"kind":' + orjson.dumps(record.kind) + b',"namespace":'
                    + orjson.dumps(record.namespace or None) + b',"name":')
            nodes.append(b'{"id":' + encoded + middle + orjson.dumps(record.name) + b"}")
        if nodes:
            yield separator + b",".join(nodes)
            separator = b","
        await asyncio.sleep(0)  # let informers and tool calls run
    yield b'],"links":['
    separator = b""
    # relationship -> the link's type and key fields (a StrEnum: the value is encoded)
    tails = {rel: b',"type":' + orjson.dumps(rel) + b',"key":' + orjson.dumps(rel) + b"}"
             for rel in Rel}
    links: list[bytes] = []  # each a run of links from one source with one relationship
    count = 0  # links in ``links``
    for key in keys:
        source = written.get(key)
        if source is None or not view.exists(key):
            continue
        opening = b'{"source":' + source + b',"target":'
        for rel, others in view.out_edge_runs(key):
            # The targets written, encoded, without a Python step per link (C all along).
            targets = list(filter(None, map(written.get, others)))
            if targets:
                tail = tails[rel]
                links.append(opening + (tail + b"," + opening).join(targets) + tail)
                count += len(targets)
        if count >= link_chunk:  # between two nodes: no iteration is left open
            yield separator + b",".join(links)
            separator, links, count = b",", [], 0
            await asyncio.sleep(0)
    if links:
        yield separator + b",".join(links)
    yield b"]}"
    if len(keys) >= RELEASE_AFTER:
        # Tens of MiB were allocated and freed by now, below live blocks: glibc keeps such
        # holes in RSS until a trim, which the collector keeper does only once a minute.
        # On a thread: a trim walks the whole heap, and the loop has callers to serve.
        await asyncio.to_thread(release_free_memory)


async def graph_endpoint(request: Request, store: GraphStore, known_kinds: Iterable[str]
                         ) -> Response:
    view = await view_for(request, store)  # only the namespaces the caller may see
    try:
        selection = parse_selection(request, view, known_kinds)
    except BadFilter as exc:
        return error_response(exc)
    tag = etag(store)
    if isinstance(view, ScopedView):  # another scope, another document
        tag = f'{tag[:-1]}.{view.scope_digest}"'
    if not_modified(request, tag):
        return Response(status_code=304, headers={"ETag": tag})
    keys = select_keys(view, selection)
    header: dict[str, object] = {"generation": store.generation,
                                 "clusterName": store.cluster_name,
                                 "source": store.source.value}
    headers = {"ETag": tag, "Cache-Control": "no-cache",
               "X-Graph-Generation": str(store.generation)}
    return StreamingResponse(export(view, keys, header), media_type="application/json",
                             headers=headers)
