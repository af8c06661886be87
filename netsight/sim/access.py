"""Who the simulated API server thinks callers are, and what it lets them do.

A real API server authenticates bearer tokens and authorizes requests with RBAC; netsight
asks it to do both for its own HTTP callers, through TokenReview and SubjectAccessReview.
This is the simulator's side of those two APIs, with a policy tests set directly
(:attr:`SimServer.access`) or over HTTP (``POST /sim/access``):

- tokens, each naming a user and its groups (every authenticated user is also in
  ``system:authenticated``, as the real authenticators add);
- rules, each allowing a user or a group some verbs on some resources in some namespaces, or
  in all of them (a RoleBinding, or a ClusterRoleBinding), or on non-resource URLs such as
  ``/metrics`` (a ClusterRole's ``nonResourceURLs``). ``*`` matches any verb, resource
  or API group; ``system:masters`` may do anything.

The reviews themselves are requests like any other: they must carry a token the policy
knows (401 otherwise), whose user may ``create`` the review resource (403 otherwise), as the
chart's ClusterRole grants netsight's service account. By default the policy knows one
token, ``sim-token`` (the one :meth:`SimServer.write_kubeconfig` writes), for that service
account, which may create both reviews and read everything.

With ``enforce`` on, every other request is held to the same policy too (rbac.py): the
simulator then refuses, as a real API server does, what a token's rules do not allow.
Besides the rules set here, every cluster's bootstrap roles apply: discovery, health and
version paths for authenticated users, health and version for anyone
(``system:discovery``, ``system:public-info-viewer``), and self reviews.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from netsight.sim.state import ApiError, Obj

AUTHENTICATED = "system:authenticated"
MASTERS = "system:masters"
SERVICE_ACCOUNT = "system:serviceaccount:netsight:netsight"
SERVICE_ACCOUNT_TOKEN = "sim-token"
API_AUDIENCES = ("https://kubernetes.default.svc.cluster.local",)


@dataclass(frozen=True, slots=True)
class User:
    name: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    # Who the token was issued for (a projected token's audience); the API server's own by
    # default, like the token of a pod's default service account mount.
    audiences: tuple[str, ...] = API_AUDIENCES


@dataclass(frozen=True, slots=True)
class Rule:
    """Allows ``user`` (or members of ``group``) ``verbs`` on ``resources``, in
    ``namespaces`` or, when None, in every namespace and at the cluster scope; or, with
    ``non_resource_urls``, ``verbs`` on those paths (``/metrics``; ``/debug/*`` a prefix)."""

    verbs: tuple[str, ...]
    resources: tuple[str, ...]
    user: str | None = None
    group: str | None = None
    namespaces: tuple[str, ...] | None = None
    api_groups: tuple[str, ...] = ("*",)
    non_resource_urls: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if (self.user is None) == (self.group is None):
            raise ValueError("a rule names exactly one of user or group")

    def applies_to(self, user: str, groups: Iterable[str]) -> bool:
        return self.user == user if self.user is not None else self.group in set(groups)

    def allows(self, verb: str, resource: str, api_group: str, namespace: str) -> bool:
        if self.non_resource_urls is not None:
            return False
        if self.namespaces is not None and namespace not in self.namespaces:
            return False  # "" (all namespaces) needs a cluster-wide rule
        return (_matches(self.verbs, verb) and _matches(self.resources, resource)
                and _matches(self.api_groups, api_group))

    def allows_path(self, verb: str, path: str) -> bool:
        # As RBAC's nonResourceURLs: exact, or a prefix ending in '*'.
        return self.non_resource_urls is not None and _matches(self.verbs, verb) and any(
            url == path or url == "*" or (url.endswith("*") and path.startswith(url[:-1]))
            for url in self.non_resource_urls)

    def describe(self) -> str:
        subject = f'User "{self.user}"' if self.user is not None else f'Group "{self.group}"'
        if self.non_resource_urls is not None:
            return f"{subject} may {','.join(self.verbs)} {','.join(self.non_resource_urls)}"
        where = "in all namespaces" if self.namespaces is None else \
            f"in namespaces {', '.join(self.namespaces)}"
        return f"{subject} may {','.join(self.verbs)} {','.join(self.resources)} {where}"


def _matches(allowed: tuple[str, ...], value: str) -> bool:
    return "*" in allowed or value in allowed


_PUBLIC_PATHS = ("/healthz", "/livez", "/readyz", "/version", "/version/")
# The roles kube-apiserver bootstraps in every cluster, bound to every authenticated user
# (and the public paths to anyone): RBAC denies by not allowing, so without them no
# client could even discover the API.
BOOTSTRAP: tuple[Rule, ...] = (
    Rule(("get",), (), group=AUTHENTICATED, non_resource_urls=(
        "/api", "/api/*", "/apis", "/apis/*", "/openapi", "/openapi/*", *_PUBLIC_PATHS)),
    Rule(("get",), (), group="system:unauthenticated", non_resource_urls=_PUBLIC_PATHS),
    Rule(("create",), ("selfsubjectaccessreviews", "selfsubjectrulesreviews",
                       "selfsubjectreviews"), group=AUTHENTICATED,
         api_groups=("authorization.k8s.io", "authentication.k8s.io")),
)


@dataclass(frozen=True, slots=True)
class Decision:
    """One request as RBAC saw it (rbac.py): who, what, where, and whether it was allowed."""

    user: str
    verb: str
    api_group: str
    resource: str  # "pods", "pods/log", or a non-resource path
    namespace: str
    allowed: bool


@dataclass
class AccessPolicy:
    tokens: dict[str, User] = field(default_factory=dict)
    rules: list[Rule] = field(default_factory=list)
    # False: TokenReview behaves like an authenticator without audience support (an old
    # webhook): spec.audiences ignored, status.audiences empty.
    audience_aware: bool = True
    # Hold every request to the rules (rbac.py); off: the simulator serves everyone.
    enforce: bool = False
    # Every request's decision while enforcing, newest last.
    decisions: deque[Decision] = field(default_factory=lambda: deque(maxlen=10_000))

    @classmethod
    def default(cls) -> AccessPolicy:
        policy = cls()
        policy.reset()
        return policy

    def reset(self) -> None:
        """Only netsight's own service account: it may review, and read everything."""
        self.tokens.clear()
        self.rules.clear()
        self.audience_aware = True
        self.enforce = False
        self.decisions.clear()
        self.add_token(SERVICE_ACCOUNT_TOKEN, SERVICE_ACCOUNT,
                       groups=("system:serviceaccounts", "system:serviceaccounts:netsight"))
        self.allow(user=SERVICE_ACCOUNT, verbs=("create",),
                   resources=("tokenreviews", "subjectaccessreviews"))
        self.allow(user=SERVICE_ACCOUNT, verbs=("get", "list", "watch"), resources=("*",))

    def add_token(self, token: str, user: str, *, groups: Iterable[str] = (), uid: str = "",
                  audiences: Iterable[str] = API_AUDIENCES) -> None:
        self.tokens[token] = User(user, tuple(groups), uid or f"uid-{user}", tuple(audiences))

    def revoke(self, token: str) -> None:
        self.tokens.pop(token, None)

    def allow(self, *, verbs: Iterable[str], resources: Iterable[str] = (),
              user: str | None = None, group: str | None = None,
              namespaces: Iterable[str] | None = None, api_groups: Iterable[str] = ("*",),
              non_resource_urls: Iterable[str] | None = None) -> Rule:
        rule = Rule(tuple(verbs), tuple(resources), user, group,
                    None if namespaces is None else tuple(namespaces), tuple(api_groups),
                    None if non_resource_urls is None else tuple(non_resource_urls))
        self.rules.append(rule)
        return rule

    # --- decisions -----------------------------------------------------------------------

    def authenticate(self, token: str) -> User | None:
        user = self.tokens.get(token)
        if user is None:
            return None
        groups = user.groups if AUTHENTICATED in user.groups else (*user.groups, AUTHENTICATED)
        return User(user.name, groups, user.uid, user.audiences)

    def authorize(self, user: str, groups: Iterable[str], *, verb: str, resource: str,
                  api_group: str = "", namespace: str = "") -> tuple[bool, str]:
        """(allowed, reason), the reason naming the rule that allowed it."""
        groups = tuple(groups)
        if MASTERS in groups:
            return True, f'allowed: Group "{MASTERS}"'
        for rule in (*self.rules, *BOOTSTRAP):
            if rule.applies_to(user, groups) and rule.allows(verb, resource, api_group,
                                                             namespace):
                return True, f"allowed by sim rule: {rule.describe()}"
        return False, ""  # RBAC denies by not allowing, and gives no reason

    def authorize_path(self, user: str, groups: Iterable[str], *, verb: str, path: str
                       ) -> tuple[bool, str]:
        """(allowed, reason) for a non-resource URL such as ``/metrics``."""
        groups = tuple(groups)
        if MASTERS in groups:
            return True, f'allowed: Group "{MASTERS}"'
        for rule in (*self.rules, *BOOTSTRAP):
            if rule.applies_to(user, groups) and rule.allows_path(verb, path):
                return True, f"allowed by sim rule: {rule.describe()}"
        return False, ""

    # --- the review APIs -----------------------------------------------------------------

    def review(self, kind: str, body: Obj, authorization: str | None) -> Obj:
        """Answer a TokenReview or SubjectAccessReview POSTed with ``authorization``."""
        self._check_requester(kind, authorization)
        spec = body.get("spec")
        if not isinstance(spec, dict):
            raise _invalid(kind, "spec", "Required value")
        status = self._token_review(spec) if kind == "TokenReview" else \
            self._access_review(spec)
        return {"apiVersion": body.get("apiVersion"), "kind": kind,
                "metadata": {"creationTimestamp": None, **(body.get("metadata") or {})},
                "spec": spec, "status": status}

    def _check_requester(self, kind: str, authorization: str | None) -> None:
        scheme, _, token = (authorization or "").partition(" ")
        requester = self.authenticate(token.strip()) if scheme.lower() == "bearer" else None
        if requester is None or not set(requester.audiences) & set(API_AUDIENCES):
            # A token issued for another audience is no credential for the API server.
            raise ApiError(401, "Unauthorized", "Unauthorized")
        plural = "tokenreviews" if kind == "TokenReview" else "subjectaccessreviews"
        group = "authentication.k8s.io" if kind == "TokenReview" else "authorization.k8s.io"
        allowed, _ = self.authorize(requester.name, requester.groups, verb="create",
                                    resource=plural, api_group=group)
        if not allowed:
            raise ApiError(403, "Forbidden", f'{plural}.{group} is forbidden: User '
                           f'"{requester.name}" cannot create resource "{plural}" in API '
                           f'group "{group}" at the cluster scope')

    def _token_review(self, spec: Mapping[str, Any]) -> Obj:
        token = spec.get("token")
        if not isinstance(token, str) or not token:
            raise _invalid("TokenReview", "spec.token", "Required value")
        requested = spec.get("audiences") or list(API_AUDIENCES)
        if not isinstance(requested, list) or not all(isinstance(a, str) for a in requested):
            raise _invalid("TokenReview", "spec.audiences", "a list of strings")
        user = self.authenticate(token)
        if user is None:
            return {"authenticated": False, "user": {},
                    "error": "[invalid bearer token, token lookup failed]"}
        if not self.audience_aware:
            return {"authenticated": True,
                    "user": {"username": user.name, "uid": user.uid, "groups": list(user.groups)}}
        # As the API server's authenticators do: the token must carry one of the requested
        # audiences, and status.audiences is the intersection.
        audiences = [a for a in requested if a in user.audiences]
        if not audiences:
            return {"authenticated": False, "user": {},
                    "error": f"[invalid bearer token, token audiences {list(user.audiences)!r} "
                             f"is invalid for the target audiences {requested!r}]"}
        return {"authenticated": True, "audiences": audiences,
                "user": {"username": user.name, "uid": user.uid, "groups": list(user.groups)}}

    def _access_review(self, spec: Mapping[str, Any]) -> Obj:
        user = spec.get("user") or ""
        groups = spec.get("groups") or []
        if not user and not groups:
            raise _invalid("SubjectAccessReview", "spec.user",
                           "at least one of user or group must be specified")
        resource = spec.get("resourceAttributes")
        if (resource is None) == (spec.get("nonResourceAttributes") is None):
            raise _invalid("SubjectAccessReview", "spec.resourceAttributes",
                           "exactly one of nonResourceAttributes or resourceAttributes must "
                           "be specified")
        if resource is None:
            path = spec["nonResourceAttributes"]
            allowed, reason = self.authorize_path(
                str(user), [str(g) for g in groups], verb=str(path.get("verb") or ""),
                path=str(path.get("path") or ""))
            return {"allowed": allowed, "reason": reason} if reason else {"allowed": allowed}
        # RBAC names a subresource as "resource/subresource" (pods/ephemeralcontainers).
        plural = str(resource.get("resource") or "")
        if resource.get("subresource"):
            plural = f"{plural}/{resource['subresource']}"
        allowed, reason = self.authorize(
            str(user), [str(g) for g in groups], verb=str(resource.get("verb") or ""),
            resource=plural,
            api_group=str(resource.get("group") or ""),
            namespace=str(resource.get("namespace") or ""))
        return {"allowed": allowed, "reason": reason} if reason else {"allowed": allowed}

    # --- the /sim/access knob ------------------------------------------------------------

    def configure(self, body: Mapping[str, Any]) -> Obj:
        """``{"reset": true, "tokens": {TOKEN: {"username", "groups", "audiences"?}},
        "revoke": [TOKEN],
        "rules": [{"user" | "group", "verbs", "resources" | "nonResourceURLs", "namespaces"?,
        "apiGroups"?}],
        "audienceAware": bool, "enforce": bool}``;
        answers counts only, never tokens."""
        if body.get("reset"):
            self.reset()
        if "audienceAware" in body:
            self.audience_aware = body["audienceAware"] is True
        if "enforce" in body:
            self.enforce = body["enforce"] is True
        for token, user in (body.get("tokens") or {}).items():
            self.add_token(str(token), str(user["username"]),
                           groups=[str(g) for g in user.get("groups") or ()],
                           audiences=_strings(user.get("audiences") or API_AUDIENCES))
        for token in body.get("revoke") or ():
            self.revoke(str(token))
        for rule in body.get("rules") or ():
            namespaces = rule.get("namespaces")
            try:
                urls = rule.get("nonResourceURLs")
                self.allow(verbs=_strings(rule["verbs"]),
                           resources=_strings(rule["resources"]) if urls is None else (),
                           user=rule.get("user"), group=rule.get("group"),
                           namespaces=None if namespaces is None else _strings(namespaces),
                           api_groups=_strings(rule.get("apiGroups") or "*"),
                           non_resource_urls=None if urls is None else _strings(urls))
            except (KeyError, ValueError) as exc:
                raise ApiError(400, "BadRequest", f"rule {rule!r}: {exc}") from None
        return {"tokens": len(self.tokens), "rules": len(self.rules), "enforce": self.enforce}


def _strings(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _invalid(kind: str, path: str, message: str) -> ApiError:
    group = "authentication.k8s.io" if kind == "TokenReview" else "authorization.k8s.io"
    return ApiError(422, "Invalid", f'{kind}.{group} "" is invalid: {path}: Invalid value: '
                    f"{message}")
