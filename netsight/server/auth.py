"""Who calls netsight over HTTP, and which namespaces each caller may see.

Authentication: a bearer token, checked with the TokenReview API — the agent's service
account token, as the architecture decisions settle it. Authorization: a SubjectAccessReview
"may this user list pods in namespace N" for the namespaces in the graph; answers and graph
exports then come from a :class:`~netsight.graph.store.scoped.ScopedView` of those namespaces.
The graph was filled with netsight's own, cluster-wide, RBAC: this filter is what keeps one
team's agent from reading another team's topology.

Both reviews are cached briefly (valid tokens ``TOKEN_TTL``, decisions ``ACCESS_TTL``) so a
burst of tool calls costs the API server one review, not one per call; concurrent lookups of
the same key share one request. Tokens are cached under their SHA-256 and never logged. A
review that fails (API server unreachable, RBAC missing) fails closed and says so: 503 over
HTTP, a ToolError over MCP — never an answer built from a decision that was not made (a
namespace hidden because its review failed would look like an empty one). Failures are not
cached; decisions cached before the failure stay usable for their lifetime. ``ReviewHealth``
counts the failures for ``/metrics`` and tells ``/readyz`` the checks are failing.

``/healthz`` and ``/readyz`` stay open: the kubelet probes them without a token. What is
about the whole cluster rather than a namespace — ``/readyz``'s detail (events, relists and
errors per kind), ``/metrics`` (graph size, findings and errors of every caller's calls) — is
for callers who may list pods in every namespace; ``/metrics`` also for those who may ``get``
the non-resource URL ``/metrics``, as Prometheus' ClusterRole grants.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import aiohttp
import orjson
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocketClose

from netsight.analyzers.core.contracts import ErrorCode, ToolError, ToolFailure
from netsight.graph.ingest.api_responses import Response
from netsight.graph.store.live import GraphStore, GraphView
from netsight.graph.store.scoped import ScopedView
from netsight.server.config import Settings
from netsight.server.http_errors import HttpFailure

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/healthz", "/readyz"})
TOKEN_TTL = 60.0  # seconds a valid token is trusted without asking again
ACCESS_TTL = 30.0  # seconds an access decision is kept
CACHE_LIMIT = 10_000  # entries per cache; the oldest go first
REVIEW_CONCURRENCY = 16  # token reviews, and access reviews, in flight at once
TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
TOKEN_REVIEW, ACCESS_REVIEW = "TokenReview", "SubjectAccessReview"  # the review kinds
GRANT = "netsight.grant"  # the ASGI scope key the middleware sets for an authenticated caller
REALM = 'Bearer realm="netsight"'


class ReviewFailed(Exception):
    """The API server did not answer a review (unreachable, 5xx, or netsight lacks RBAC)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(f"{kind}: {message}")
        self.kind = kind  # TokenReview or SubjectAccessReview


class AccessCheckFailed(HttpFailure):
    """An access decision a request needs could not be made: the request fails (503, or a
    ToolError over MCP) rather than being answered as if the namespaces were hidden."""

    def __init__(self, question: str, exc: ReviewFailed) -> None:
        super().__init__(ErrorCode.INTERNAL_ERROR,
                         f"the access check could not be made now ({question}: {exc}); "
                         "nothing is answered without it: retry shortly",
                         status=503, headers={"Retry-After": "1"})


@dataclass
class ReviewHealth:
    """How the reviews fared: failures by kind for ``/metrics``, and which kinds are failing
    now (their last review failed, within ``ACCESS_TTL``) for ``/readyz``."""

    failures: dict[str, int] = field(default_factory=dict)  # since start, by review kind
    # kind -> when (monotonic) and why its last review failed; gone once one succeeds
    last_failures: dict[str, tuple[float, str]] = field(default_factory=dict)
    clock: Callable[[], float] = time.monotonic

    def failed(self, exc: ReviewFailed) -> None:
        self.failures[exc.kind] = self.failures.get(exc.kind, 0) + 1
        self.last_failures[exc.kind] = (self.clock(), str(exc))

    def succeeded(self, kind: str) -> None:
        self.last_failures.pop(kind, None)

    def failing(self) -> dict[str, str]:
        """The kinds failing now, with their last error. A failure older than ``ACCESS_TTL``
        with no review since says nothing about now: no decision it could have made is
        still kept."""
        now = self.clock()
        return {kind: error for kind, (at, error) in sorted(self.last_failures.items())
                if now - at < ACCESS_TTL}


@dataclass(frozen=True, slots=True)
class Caller:
    """The user a TokenReview vouched for (``status.user``)."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()


# (verb, resource, subresource, namespace) of the core API group: what a caller asks
# netsight to do on their behalf, checked as if they did it themselves.
Action = tuple[str, str, str, str]


class Poster(Protocol):
    """``KubeTransport.request``: the API server, with netsight's own credentials."""

    async def request(self, method: str, path: str, body: Any = None,
                      params: list[tuple[str, str]] | None = None) -> Response: ...


class Reviews:
    """TokenReview and SubjectAccessReview, as the API server answers them.

    ``audiences``: the audiences a token must have been issued for (TokenReview
    ``spec.audiences``); empty: the field is omitted, so the API server checks its own.
    """

    def __init__(self, api: Poster, *, audiences: Iterable[str] = ()) -> None:
        self.api = api
        self.audiences = tuple(audiences)

    async def token(self, token: str) -> Caller | None:
        """The user ``token`` authenticates, or None if the API server rejects it."""
        spec: dict[str, Any] = {"token": token}
        if self.audiences:
            spec["audiences"] = list(self.audiences)
        status = await self._review(TOKEN_REVIEWS, {
            "apiVersion": "authentication.k8s.io/v1", "kind": TOKEN_REVIEW, "spec": spec})
        if status.get("authenticated") is not True:
            return None
        if self.audiences and not set(self.audiences) & set(status.get("audiences") or ()):
            # The API reference: a client that sets spec.audiences must find one of them in
            # status.audiences. An authenticator that ignores audiences answers none, and
            # its "authenticated" then means valid for the API server, not for netsight.
            log.info("rejected a token: not issued for %s", ", ".join(self.audiences))
            return None
        user = status.get("user") or {}
        extra = user.get("extra") or {}
        return Caller(username=str(user.get("username") or ""),
                      groups=tuple(str(g) for g in user.get("groups") or ()),
                      uid=str(user.get("uid") or ""),
                      extra=tuple(sorted((str(k), tuple(str(v) for v in vs))
                                         for k, vs in extra.items())))

    async def may_list_pods(self, caller: Caller, namespace: str) -> bool:
        """Whether ``caller`` may list pods in ``namespace`` ("": in every namespace)."""
        return await self._allowed(caller, {"resourceAttributes": {
            "namespace": namespace, "verb": "list", "group": "", "resource": "pods"}})

    async def may(self, caller: Caller, action: Action) -> bool:
        """Whether ``caller`` may do ``action`` (a probe pod's creation, say)."""
        verb, resource, subresource, namespace = action
        attributes = {"namespace": namespace, "verb": verb, "group": "",
                      "resource": resource}
        if subresource:
            attributes["subresource"] = subresource
        return await self._allowed(caller, {"resourceAttributes": attributes})

    async def may_get_path(self, caller: Caller, path: str) -> bool:
        """Whether ``caller`` may ``get`` the non-resource URL ``path`` (``/metrics``), as a
        ClusterRole's ``nonResourceURLs`` grants it to Prometheus."""
        return await self._allowed(caller, {"nonResourceAttributes": {"path": path,
                                                                      "verb": "get"}})

    async def _allowed(self, caller: Caller, attributes: dict[str, Any]) -> bool:
        """A SubjectAccessReview of ``caller`` for ``attributes`` (resource or not)."""
        spec: dict[str, Any] = {"user": caller.username, "groups": list(caller.groups),
                                **attributes}
        if caller.uid:
            spec["uid"] = caller.uid
        if caller.extra:
            spec["extra"] = {k: list(v) for k, v in caller.extra}
        status = await self._review(ACCESS_REVIEWS, {
            "apiVersion": "authorization.k8s.io/v1", "kind": ACCESS_REVIEW, "spec": spec})
        return status.get("allowed") is True

    async def _review(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        kind = body["kind"]
        try:
            response = await self.api.request("POST", path, body)
            try:
                raw = await response.read()
            finally:
                response.release()
        except (aiohttp.ClientError, TimeoutError, OSError) as exc:
            raise ReviewFailed(kind, f"{type(exc).__name__}: {exc}") from None
        if response.status not in (200, 201):
            raise ReviewFailed(kind, f"HTTP {response.status} {_status_message(raw)}")
        try:
            answer = orjson.loads(raw)
        except orjson.JSONDecodeError:
            raise ReviewFailed(kind, "the answer is not JSON") from None
        status = answer.get("status") if isinstance(answer, dict) else None
        return status if isinstance(status, dict) else {}


def _status_message(raw: bytes) -> str:
    """The message of a Status object (never the request: that held the token)."""
    try:
        status = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return ""
    message = status.get("message") if isinstance(status, dict) else None
    return str(message)[:200] if message else ""


K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class Memo(Generic[K, V]):
    """Answers of an async lookup kept for ``ttl`` seconds; concurrent lookups of one key
    share one call. Failures are not kept, nor are answers ``keep`` refuses."""

    def __init__(self, ttl: float, *, limit: int = CACHE_LIMIT,
                 keep: Callable[[V], bool] = lambda _: True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl, self.limit, self.keep, self.clock = ttl, limit, keep, clock
        self._entries: dict[K, tuple[float, V]] = {}
        self._pending: dict[K, asyncio.Future[V]] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def peek(self, key: K) -> V | None:
        """The kept answer for ``key``, without looking it up; None if there is none."""
        entry = self._entries.get(key)
        return entry[1] if entry is not None and entry[0] > self.clock() else None

    async def get(self, key: K, lookup: Callable[[], Awaitable[V]]) -> V:
        entry = self._entries.get(key)
        if entry is not None:
            if entry[0] > self.clock():
                return entry[1]
            del self._entries[key]
        pending = self._pending.get(key)
        if pending is None:
            pending = self._pending[key] = asyncio.ensure_future(lookup())
            pending.add_done_callback(lambda done: self._settle(key, done))
        # Shielded: one caller giving up (a cancelled request) must not fail the others.
        return await asyncio.shield(pending)

    def _settle(self, key: K, done: asyncio.Future[V]) -> None:
        self._pending.pop(key, None)
        if done.cancelled() or done.exception() is not None:
            return
        value = done.result()
        if not self.keep(value):
            return
        if len(self._entries) >= self.limit:
            del self._entries[next(iter(self._entries))]
        self._entries[key] = (self.clock() + self.ttl, value)


class Guard:
    """Authentication and per-namespace authorization, with their caches."""

    def __init__(self, reviews: Reviews, *, token_ttl: float = TOKEN_TTL,
                 access_ttl: float = ACCESS_TTL) -> None:
        self.reviews = reviews
        self.tokens: Memo[str, Caller | None] = Memo(token_ttl, keep=lambda c: c is not None)
        # One decision per caller and namespace: room for many of both.
        self.decisions: Memo[tuple[Caller, str], bool] = Memo(access_ttl,
                                                             limit=10 * CACHE_LIMIT)
        self.paths: Memo[tuple[Caller, str], bool] = Memo(access_ttl)  # non-resource URLs
        self.actions: Memo[tuple[Caller, Action], bool] = Memo(access_ttl)  # probes' writes
        self.health = ReviewHealth()
        self._limit = asyncio.Semaphore(REVIEW_CONCURRENCY)
        self._token_limit = asyncio.Semaphore(REVIEW_CONCURRENCY)

    async def _recorded(self, kind: str, review: Awaitable[V]) -> V:
        """``review``'s answer, its outcome counted once however many requests wait on it."""
        try:
            answer = await review
        except ReviewFailed as exc:
            self.health.failed(exc)
            raise
        self.health.succeeded(kind)
        return answer

    async def authenticate(self, token: str) -> Caller | None:
        """The caller ``token`` stands for; None if it is not valid.

        Raises:
            ReviewFailed: the TokenReview could not be made.
        """
        digest = hashlib.sha256(token.encode()).hexdigest()

        async def review() -> Caller | None:
            # Refused tokens are not kept (one just issued must work at once), so a client
            # repeating a bad token could make the API server review without end: at most
            # this many at a time, apart from the access reviews of valid callers.
            async with self._token_limit:
                return await self._recorded(TOKEN_REVIEW, self.reviews.token(token))

        return await self.tokens.get(digest, review)

    async def may_list_pods(self, caller: Caller, namespace: str) -> bool:
        """Raises:
            AccessCheckFailed: the SubjectAccessReview could not be made."""
        async def review() -> bool:
            async with self._limit:
                return await self._recorded(ACCESS_REVIEW,
                                            self.reviews.may_list_pods(caller, namespace))

        try:
            return await self.decisions.get((caller, namespace), review)
        except ReviewFailed as exc:
            question = f"may {caller.username} list pods in {namespace or 'every namespace'}"
            log.warning("cannot check %s (%s); refusing the request", question, exc)
            raise AccessCheckFailed(question, exc) from None

    async def may_get_path(self, caller: Caller, path: str) -> bool:
        """Raises:
            AccessCheckFailed: the SubjectAccessReview could not be made."""
        async def review() -> bool:
            async with self._limit:
                return await self._recorded(ACCESS_REVIEW, self.reviews.may_get_path(caller, path))

        try:
            return await self.paths.get((caller, path), review)
        except ReviewFailed as exc:
            question = f"may {caller.username} get {path}"
            log.warning("cannot check %s (%s); refusing the request", question, exc)
            raise AccessCheckFailed(question, exc) from None

    async def may(self, caller: Caller, action: Action) -> bool:
        """Raises:
            AccessCheckFailed: the SubjectAccessReview could not be made."""
        async def review() -> bool:
            async with self._limit:
                return await self._recorded(ACCESS_REVIEW, self.reviews.may(caller, action))

        try:
            return await self.actions.get((caller, action), review)
        except ReviewFailed as exc:
            verb, resource, subresource, namespace = action
            question = (f"may {caller.username} {verb} {resource}"
                        f"{'/' + subresource if subresource else ''} in {namespace}")
            log.warning("cannot check %s (%s); refusing the request", question, exc)
            raise AccessCheckFailed(question, exc) from None

    async def sees_cluster(self, caller: Caller) -> bool:
        """Whether ``caller`` may list pods in every namespace: sees the whole graph, so
        whole-cluster figures (object counts, informer errors) tell them nothing new."""
        return await self.may_list_pods(caller, "")

    async def visible(self, caller: Caller, namespaces: Iterable[str]) -> frozenset[str] | None:
        """The namespaces of ``namespaces`` ``caller`` may list pods in; None: all of them
        (a cluster-wide grant, one review instead of one per namespace).

        Raises:
            AccessCheckFailed: one of the decisions could not be made (never a partial set).
        """
        if await self.may_list_pods(caller, ""):
            return None
        decided = {ns: self.decisions.peek((caller, ns)) for ns in namespaces}
        # Only what is not cached becomes a task: an open change stream asks at every wake.
        unknown = sorted(ns for ns, ok in decided.items() if ok is None)
        answers = await asyncio.gather(*(self.may_list_pods(caller, ns) for ns in unknown))
        decided.update(zip(unknown, answers, strict=True))
        return frozenset(ns for ns, ok in decided.items() if ok)

    async def view(self, caller: Caller, store: GraphStore) -> GraphView:
        view = store.view()
        namespaces = await self.visible(caller, view.namespaces())
        return view if namespaces is None else ScopedView(view, namespaces)


@dataclass(frozen=True, slots=True)
class Grant:
    """What the middleware hands the endpoints: the caller, and how to scope their view."""

    caller: Caller
    guard: Guard

    async def view(self, store: GraphStore) -> GraphView:
        return await self.guard.view(self.caller, store)


async def view_for(request: Request | None, store: GraphStore, *,
                   required: bool = False) -> GraphView:
    """The graph as the caller of ``request`` may see it; the whole graph where callers are
    not authenticated (loopback, ``--auth none``, stdio).

    ``required``: callers are authenticated here, so a request without a grant (a path the
    middleware did not see) is refused rather than answered from the whole graph.
    """
    grant = request.scope.get(GRANT) if request is not None else None
    if isinstance(grant, Grant):
        return await grant.view(store)
    if required:
        raise ToolFailure(ErrorCode.AUTH_FAILED, "this call reached netsight without an "
                          "authenticated caller; nothing is answered from the whole graph")
    return store.view()


class AuthMiddleware:
    """Requires a bearer token TokenReview accepts on every path but the probes."""

    def __init__(self, app: ASGIApp, *, guard: Guard) -> None:
        self.app, self.guard = app, guard

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] == "http" and scope["path"] in OPEN_PATHS:
            await self.app(await self._maybe_known(scope), receive, send)
            return
        if scope["type"] != "http":  # no WebSocket endpoint exists; none gets in unchecked
            await WebSocketClose(code=1008)(scope, receive, send)  # 1008: policy violation
            return
        token = bearer_token(Request(scope).headers.get("authorization"))
        if token is None:
            await _refuse(401, "a bearer token is required: Authorization: Bearer <token>",
                          scope, REALM)(scope, receive, send)
            return
        try:
            caller = await self.guard.authenticate(token)
        except ReviewFailed as exc:
            log.warning("cannot check a bearer token (%s)", exc)
            await _refuse(503, "cannot check the bearer token now; retry shortly", scope,
                          None)(scope, receive, send)
            return
        if caller is None:
            log.info("rejected a request to %s: the bearer token is not valid", scope["path"])
            await _refuse(401, "the bearer token is not valid", scope,
                          f'{REALM}, error="invalid_token"')(scope, receive, send)
            return
        log.debug("request to %s by %s", scope["path"], caller.username)
        await self.app({**scope, GRANT: Grant(caller, self.guard)}, receive, send)


    async def _maybe_known(self, scope: Scope) -> Scope:
        """An open path never refuses (the kubelet sends no token), but a caller who sends a
        valid one is known to it, for answers with more detail."""
        token = bearer_token(Request(scope).headers.get("authorization"))
        if token is None:
            return scope
        try:
            caller = await self.guard.authenticate(token)
        except ReviewFailed:
            return scope
        return scope if caller is None else {**scope, GRANT: Grant(caller, self.guard)}


def grant_of(request: Request) -> Grant | None:
    """The authenticated caller of ``request``, if the auth middleware vouched for one."""
    grant = request.scope.get(GRANT)
    return grant if isinstance(grant, Grant) else None


def bearer_token(header: str | None) -> str | None:
    scheme, _, token = (header or "").partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def _refuse(status: int, message: str, scope: Scope, challenge: str | None) -> JSONResponse:
    code = ErrorCode.AUTH_FAILED if status == 401 else ErrorCode.INTERNAL_ERROR
    body = ToolError(code=code, message=message, tool=scope["path"]).model_dump(mode="json")
    headers = {"WWW-Authenticate": challenge} if challenge else {"Retry-After": "1"}
    return JSONResponse(body, status_code=status, headers=headers)


def guard_of(middleware: Iterable[Middleware]) -> Guard | None:
    """The Guard of the auth middleware among ``middleware``; None where callers are not
    checked."""
    for entry in middleware:
        guard = entry.kwargs.get("guard")  # AuthMiddleware's, the one taking a Guard
        if isinstance(guard, Guard):
            return guard
    return None


def middleware(settings: Settings, api: Poster | None) -> list[Middleware]:
    """The auth middleware ``settings`` call for (none where callers are not checked);
    ``api`` posts the reviews with netsight's own credentials."""
    if not settings.authenticates:
        return []
    if api is None:
        raise RuntimeError("authenticating callers needs a connection to the API server")
    return [Middleware(AuthMiddleware,
                       guard=Guard(Reviews(api, audiences=settings.auth_audiences)))]
