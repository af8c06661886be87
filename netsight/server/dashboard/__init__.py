"""``/dashboard``: the live graph in a browser, for SREs, and the small JSON endpoints it uses.

The page is plain HTML/CSS/JS (``page.html`` and ``static/``) drawing ``/api/graph`` with
Cytoscape.js, vendored from npm into ``static/vendor/`` (``web/``: ``npm ci && npm run build``;
the built file is committed, so a plain ``pip install`` serves it offline). Nothing is loaded
from another origin, and the Content-Security-Policy says so to the browser.

Endpoints, all answering from the request's view (``auth.view_for``: the namespaces the
caller may see), errors as ToolError JSON like ``/api/graph``:

- ``GET /api/graph/summary``: node counts per namespace and kind, so the page can ask for a
  namespace before drawing a 100k-pod graph;
- ``GET /api/findings?object=Kind/ns/name``: an object's findings (``analyze_config`` over its
  namespace, narrowed to it; ``diagnose_service`` too for a Service; a Namespace gets all of
  its namespace's findings), in detail mode;
- ``GET /api/findings/overview[?namespace=N&min_severity=S]``: ``analyze_config``'s findings
  (warnings and worse unless ``min_severity`` says otherwise), worst first, for the page's
  findings panel, and the worst severity per object, for it to mark nodes;
- ``POST /api/verdict`` with ``{"source", "destination", "port", "protocol"}``:
  ``find_blocking_policies``' answer, in detail mode.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import hashlib
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from netsight.analyzers.core import deadline
from netsight.analyzers.core.calling import parse_args, to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.graph.model.kinds import Kind, parse_key
from netsight.graph.store.live import GraphView
from netsight.server.auth import view_for
from netsight.server.http_errors import failure_response
from netsight.server.mcp_tools import ToolHost, answered, prepared
from netsight.server.request_limits import read_body

PAGE = "/dashboard"
STATIC = "/dashboard/static"
SUMMARY = "/api/graph/summary"
FINDINGS = "/api/findings"
OVERVIEW = "/api/findings/overview"
VERDICT = "/api/verdict"

HERE = Path(__file__).parent
DRAW_LIMIT = 1_500  # nodes the page draws at once; beyond, it asks for a namespace first
FINDINGS_PAGE = 500  # analyze_config's largest page
MAX_FINDINGS_PAGES = 20  # an object's findings are looked for in at most this many pages
MAX_BODY = 16_384  # bytes of a verdict request

CONTENT_TYPES = {".html": "text/html; charset=utf-8",
                 ".js": "text/javascript; charset=utf-8",
                 ".css": "text/css; charset=utf-8",
                 ".svg": "image/svg+xml"}
# The one inline style the page runs: the rule Cytoscape.js injects for its container.
CYTOSCAPE_STYLE = ".__________cytoscape_container { position: relative; }"
_STYLE_HASH = base64.b64encode(hashlib.sha256(CYTOSCAPE_STYLE.encode()).digest()).decode()
SECURITY_HEADERS = {
    # Everything comes from this origin; no inline script, no other inline style, no framing.
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self' "
                               f"'sha256-{_STYLE_HASH}'; "
                               "img-src 'self' data:; connect-src 'self'; base-uri 'none'; "
                               "form-action 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}
RANK = {"critical": 0, "warning": 1, "info": 2, "ok": 3}


@dataclass(frozen=True, slots=True)
class Asset:
    body: bytes
    content_type: str
    etag: str


@functools.cache
def assets() -> dict[str, Asset]:
    """The page and its static files by URL path, read once; nothing else is served."""
    def asset(path: Path) -> Asset:
        body = path.read_bytes()
        return Asset(body, CONTENT_TYPES[path.suffix],
                     f'"{hashlib.sha256(body).hexdigest()[:16]}"')

    found = {PAGE: asset(HERE / "page.html")}
    root = HERE / "static"
    for path in sorted(root.rglob("*")):
        if path.is_file() and path.suffix in CONTENT_TYPES:
            found[f"{STATIC}/{path.relative_to(root).as_posix()}"] = asset(path)
    return found


def serve_asset(request: Request) -> Response:
    found = assets().get(request.url.path)
    if found is None:
        return failure_response(ToolFailure(ErrorCode.NOT_FOUND,
                                            f"no file {request.url.path!r}"), request.url.path)
    headers = {"ETag": found.etag, "Cache-Control": "no-cache", **SECURITY_HEADERS}
    if request.headers.get("if-none-match") == found.etag:
        return Response(status_code=304, headers=headers)
    return Response(found.body, media_type=found.content_type, headers=headers)


async def call(host: ToolHost, view: GraphView, name: str, arguments: Mapping[str, Any]
               ) -> dict[str, Any]:
    """One catalog tool over ``view``, in detail mode, as its JSON; failures raise.

    Under TOOL_TIMEOUT as an MCP call is: the analyzer stops at the deadline it checks
    (``run_tool``), and the loop turns before each call, so an endpoint calling page after
    page never holds it for more than one."""
    tool = host.tool(name)
    args = parse_args(tool, {**arguments, "detail": True})
    host.in_flight += 1
    try:
        await asyncio.sleep(0)
        started = time.monotonic()
        async with asyncio.timeout(host.timeout):
            await prepared(tool, args)
            with deadline.within(host.timeout - (time.monotonic() - started)):
                return to_json(await answered(tool, view, args), detail=True)
    except (TimeoutError, deadline.DeadlineExceeded):
        raise ToolFailure(ErrorCode.INTERNAL_ERROR, f"{name} did not answer within "
                          f"TOOL_TIMEOUT ({host.timeout:g}s)", tool=name) from None
    finally:
        host.in_flight -= 1


# --- GET /api/graph/summary ---------------------------------------------------------------


def summarize(view: GraphView) -> dict[str, Any]:
    kinds = view.kinds()
    per_kind = {kind: n for kind in kinds if (n := view.count(kind))}
    namespaces = {ns: sum(view.count(kind, ns) for kind in kinds)
                  for ns in sorted(view.namespaces())}
    return {"generation": view.generation, "clusterName": view.cluster_name,
            "source": view.source.value, "nodes": sum(per_kind.values()),
            "kinds": per_kind, "namespaces": namespaces, "drawLimit": DRAW_LIMIT}


async def summary_endpoint(request: Request, host: ToolHost) -> Response:
    if request.query_params:
        return failure_response(ToolFailure(ErrorCode.INVALID_INPUT,
                                            "the summary takes no parameters"), SUMMARY)
    return JSONResponse(summarize(await view_for(request, host.store)),
                        headers={"Cache-Control": "no-cache"})


# --- GET /api/findings?object=Kind/ns/name -------------------------------------------------


def ref_key(ref: object) -> str | None:
    if not isinstance(ref, dict):
        return None
    return "/".join(p for p in (ref.get("kind"), ref.get("namespace"), ref.get("name")) if p)


def _about(finding: Mapping[str, Any], key: str) -> bool:
    refs = [finding.get("resource"), *(e.get("resource") for e in finding.get("evidence") or ())]
    return any(ref_key(ref) == key for ref in refs)


async def object_findings(host: ToolHost, view: GraphView, key: str) -> dict[str, Any]:
    oid = parse_key(key)
    namespace = oid.name if oid.kind == Kind.NAMESPACE else oid.namespace or None
    findings: list[dict[str, Any]] = []
    arguments: dict[str, Any] = {"limit": FINDINGS_PAGE}
    if namespace is not None:
        arguments["namespace"] = namespace
    metadata: Any = None
    for _ in range(MAX_FINDINGS_PAGES):
        answer = await call(host, view, "analyze_config", arguments)
        metadata = metadata or answer.get("metadata")
        findings.extend(f for f in answer["findings"]
                        if oid.kind == Kind.NAMESPACE or _about(f, key))
        cursor = answer["page"].get("nextCursor")
        if not cursor:
            break
        arguments["cursor"] = cursor
    body: dict[str, Any] = {"object": key, "kind": oid.kind, "namespace": oid.namespace or None,
                            "name": oid.name, "metadata": metadata}
    if oid.kind == Kind.SERVICE:
        diagnosis = await call(host, view, "diagnose_service",
                               {"service": f"{oid.namespace}/{oid.name}"})
        seen = {(f["code"], f["summary"]) for f in findings}
        findings = [*(f for f in diagnosis["findings"] if (f["code"], f["summary"]) not in seen),
                    *findings]
        body["service"] = {k: v for k, v in diagnosis.items()
                           if k not in ("metadata", "findings")}
    findings.sort(key=lambda f: RANK.get(f.get("severity", ""), 9))
    body["findings"] = findings
    return body


async def findings_endpoint(request: Request, host: ToolHost) -> Response:
    params = request.query_params
    key = params.get("object")
    try:
        unknown = sorted(set(params) - {"object"})
        if unknown:
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"unknown parameter {unknown[0]!r}; "
                              "give object=Kind/namespace/name")
        if not key:
            raise ToolFailure(ErrorCode.INVALID_INPUT, "object: required, as "
                              "Kind/namespace/name (Kind/name for cluster-scoped objects)")
        if len(key) > 400 or key.count("/") not in (1, 2) or not all(key.split("/")):
            raise ToolFailure(ErrorCode.INVALID_INPUT, "object: 'Kind/namespace/name' or "
                              f"'Kind/name' for cluster-scoped objects; got {key[:400]!r}")
        view = await view_for(request, host.store)
        if not view.exists(key):
            raise ToolFailure(ErrorCode.NOT_FOUND, f"object: no object {key!r} in the graph")
        return JSONResponse(await object_findings(host, view, key),
                            headers={"Cache-Control": "no-store"})
    except ToolFailure as exc:
        return failure_response(exc, FINDINGS)


# --- GET /api/findings/overview[?namespace=N&min_severity=S] -------------------------------

# What the page's findings panel lists of each finding; the rest (detail, suggestion,
# evidence) comes with the object's findings when one is clicked.
LISTED = ("code", "severity", "category", "summary", "resource")


async def overview_endpoint(request: Request, host: ToolHost) -> Response:
    params = request.query_params
    try:
        unknown = sorted(set(params) - {"namespace", "min_severity"})
        if unknown:
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"unknown parameter {unknown[0]!r}; "
                              "the overview takes namespace and min_severity")
        arguments: dict[str, Any] = {"limit": FINDINGS_PAGE,
                                     "min_severity": params.get("min_severity", "warning")}
        if params.get("namespace"):
            arguments["namespace"] = params["namespace"]
        view = await view_for(request, host.store)
        worst: dict[str, str] = {}
        counts: dict[str, int] = {}
        listed: list[dict[str, Any]] = []
        cursor = None
        for _ in range(MAX_FINDINGS_PAGES):
            answer = await call(host, view, "analyze_config", arguments)
            counts = answer["counts"]
            for finding in answer["findings"]:
                key = ref_key(finding.get("resource"))
                listed.append({**{k: finding[k] for k in LISTED if k in finding},
                               "object": key})
                if key is None:
                    continue
                if RANK.get(finding["severity"], 9) < RANK.get(worst.get(key, ""), 9):
                    worst[key] = finding["severity"]
            cursor = answer["page"].get("nextCursor")
            if not cursor:
                break
            arguments["cursor"] = cursor
        # Findings come worst first (analyze_config's order); beyond the pages read the list
        # stops, and says so.
        return JSONResponse({"objects": worst, "counts": counts, "findings": listed,
                             "complete": not cursor},
                            headers={"Cache-Control": "no-store"})
    except ToolFailure as exc:
        return failure_response(exc, OVERVIEW)


# --- POST /api/verdict ---------------------------------------------------------------------


async def verdict_endpoint(request: Request, host: ToolHost) -> Response:
    try:
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise ToolFailure(ErrorCode.INVALID_INPUT, "send the question as JSON "
                              "(Content-Type: application/json)")
        raw = await read_body(request, MAX_BODY)
        try:
            question = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ToolFailure(ErrorCode.INVALID_INPUT, "the body is not JSON") from None
        if not isinstance(question, dict):
            raise ToolFailure(ErrorCode.INVALID_INPUT, 'the body is a JSON object: {"source": '
                              '"ns/pod", "destination": "ns/pod", "port": 80, '
                              '"protocol": "TCP"}')
        view = await view_for(request, host.store)
        answer = await call(host, view, "find_blocking_policies", question)
        return JSONResponse(answer, headers={"Cache-Control": "no-store"})
    except ToolFailure as exc:
        return failure_response(exc, VERDICT)


def routes(host: ToolHost) -> list[Route]:
    async def page(request: Request) -> Response:
        return serve_asset(request)

    async def summary(request: Request) -> Response:
        return await summary_endpoint(request, host)

    async def findings(request: Request) -> Response:
        return await findings_endpoint(request, host)

    async def overview(request: Request) -> Response:
        return await overview_endpoint(request, host)

    async def verdict(request: Request) -> Response:
        return await verdict_endpoint(request, host)

    return [
        Route(PAGE, page, methods=["GET"]),
        Route(STATIC + "/{path:path}", page, methods=["GET"]),
        Route(SUMMARY, summary, methods=["GET"]),
        Route(FINDINGS, findings, methods=["GET"]),
        Route(OVERVIEW, overview, methods=["GET"]),
        Route(VERDICT, verdict, methods=["POST"]),
    ]
