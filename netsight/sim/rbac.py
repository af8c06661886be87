"""RBAC on every request to the simulated API server, as kube-apiserver enforces it.

Off by default (the simulator then serves everyone, as tests and the demo expect); on with
``AccessPolicy.enforce`` (``POST /sim/access {"enforce": true}``). Then, before anything
else: the bearer token is authenticated (an unknown one gets 401; none at all is
``system:anonymous``), the request is read into RBAC's attributes the way the API server's
RequestInfoFactory reads a path (verb, API group, resource, subresource, namespace, name;
``watch`` is a list with ``watch=1``; ``/api/v1`` and ``/apis/G/V`` themselves are
non-resource discovery paths) and authorized against the policy's rules plus the bootstrap
roles every cluster has (discovery, health and version for authenticated users), with 403
in the API server's words. Every decision is kept (``AccessPolicy.decisions``), allowed or
not: tests read which requests a token made after a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson
from starlette.datastructures import Headers, QueryParams
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from netsight.sim.access import AccessPolicy, Decision
from netsight.sim.state import ApiError

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
CONTROL = "/sim/"  # the simulator's control endpoints have a guard of their own
_VERBS = {"GET": "get", "HEAD": "get", "POST": "create", "PUT": "update", "PATCH": "patch",
          "DELETE": "delete"}


@dataclass(frozen=True, slots=True)
class RequestAttributes:
    """What RBAC decides on: k8s.io/apiserver's RequestInfo, as far as the simulator needs."""

    verb: str
    path: str
    resource_request: bool
    api_group: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def described(self) -> str:
        """The resource as RBAC names it (``pods/log``), or the path."""
        if not self.resource_request:
            return self.path
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def attributes(method: str, path: str, query: QueryParams) -> RequestAttributes:
    """A request read as kube-apiserver's RequestInfoFactory reads it."""
    verb = _VERBS.get(method, method.lower())
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:  # /api, /api/v1, /apis, /apis/G, /apis/G/V, /version, /healthz, ...
        return RequestAttributes(verb, path, False)
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 1:
        namespace = rest[1]
        if len(rest) > 2 and rest[2] not in ("status", "finalize"):
            rest = rest[2:]
    resource, name = rest[0], rest[1] if len(rest) > 1 else ""
    subresource = rest[2] if len(rest) > 2 else ""
    if not name:
        if verb == "get":
            verb = "watch" if query.get("watch") in ("1", "true") else "list"
        elif verb == "delete":
            verb = "deletecollection"
    return RequestAttributes(verb, path, True, group, resource, subresource, namespace, name)


def forbidden(user: str, request: RequestAttributes) -> ApiError:
    """403 as k8s.io/apiserver's responsewriters.Forbidden words it."""
    if not request.resource_request:
        return ApiError(403, "Forbidden", f'forbidden: User "{user}" cannot {request.verb} '
                        f'path "{request.path}"', {})
    where = f'in the namespace "{request.namespace}"' if request.namespace \
        else "at the cluster scope"
    why = (f'User "{user}" cannot {request.verb} resource "{request.described}" in API group '
           f'"{request.api_group}" {where}')
    qualified = f"{request.resource}.{request.api_group}" if request.api_group \
        else request.resource
    named = f'{qualified} "{request.name}"' if request.name else qualified
    details = {"name": request.name, "group": request.api_group, "kind": request.resource}
    return ApiError(403, "Forbidden", f"{named} is forbidden: {why}",
                    {k: v for k, v in details.items() if v})


UNAUTHORIZED = ApiError(401, "Unauthorized", "Unauthorized")


class RbacGuard:
    """ASGI middleware: every request but the control endpoints', authenticated and
    authorized while ``policy.enforce`` is on."""

    def __init__(self, app: ASGIApp, policy: AccessPolicy) -> None:
        self.app, self.policy = app, policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        policy = self.policy
        if scope["type"] != "http" or not policy.enforce or scope["path"].startswith(CONTROL):
            await self.app(scope, receive, send)
            return
        error = self.check(scope)
        if error is not None:
            response = Response(orjson.dumps(error.status()), status_code=error.code,
                                media_type="application/json")
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def check(self, scope: Scope) -> ApiError | None:
        policy = self.policy
        scheme, _, token = Headers(scope=scope).get("authorization", "").partition(" ")
        if scheme:
            user = policy.authenticate(token.strip()) if scheme.lower() == "bearer" else None
            if user is None:
                return UNAUTHORIZED
            name, groups = user.name, user.groups
        else:
            name, groups = ANONYMOUS, (UNAUTHENTICATED,)
        request = attributes(scope["method"], scope["path"],
                             QueryParams(scope.get("query_string", b"")))
        if request.resource_request:
            allowed, _ = policy.authorize(name, groups, verb=request.verb,
                                          resource=request.described,
                                          api_group=request.api_group,
                                          namespace=request.namespace)
        else:
            allowed, _ = policy.authorize_path(name, groups, verb=request.verb,
                                               path=request.path)
        policy.decisions.append(Decision(name, request.verb, request.api_group,
                                         request.described, request.namespace, allowed))
        return None if allowed else forbidden(name, request)
