"""Istio AuthorizationPolicy and PeerAuthentication specs: every documented shape is read,
every shape Istio's validation rejects becomes a problem naming the field (never a guess),
and string fields match as the reference says ("Exact, Prefix, Suffix and Presence")."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.policy.istio_model import (
    Action,
    Mode,
    build_authz,
    build_peer_authn,
    path_matches,
    string_matches,
)
from netsight.graph.model.records import GenericRecord


def record(kind: str, spec: Any, annotations: dict[str, str] | None = None) -> GenericRecord:
    return GenericRecord(kind=kind, api_version="security.istio.io/v1", namespace="shop",
                         name="p", spec=spec, annotations=annotations or {})


@pytest.mark.parametrize(("spec", "problem"), [
    ({}, None),  # allow-nothing
    ({"rules": [{}]}, None),  # allow-all
    ({"action": "DENY", "rules": [{"from": [{"source": {"notPrincipals": ["*"]}}]}]}, None),
    ({"action": "CUSTOM", "provider": {"name": "ext"}, "rules": [{}]}, None),
    ({"action": "AUDIT", "rules": [{"to": [{"operation": {"paths": ["/x/{*}/y"]}}]}]}, None),
    ({"rules": [{"when": [{"key": "request.auth.claims[iss]", "values": ["a"]}]}]}, None),
    ({"targetRefs": [{"kind": "Gateway", "group": "gateway.networking.k8s.io",
                      "name": "gw"}]}, None),
    ({"action": "allow"}, "spec.action"),
    ({"action": "CUSTOM", "rules": [{}]}, "spec.provider"),
    ({"action": "DENY", "provider": {"name": "ext"}}, "spec.provider"),
    ({"selector": {"matchLabels": {"a": "b"}}, "targetRefs": [{"kind": "Service",
                                                              "name": "s"}]},
     "spec.selector"),
    ({"selector": {"matchLabels": {"a": 1}}}, "spec.selector.matchLabels.a"),
    ({"rules": {}}, "spec.rules"),
    ({"rules": [{"from": [{"source": {}}]}]}, "spec.rules[0].from[0].source"),
    ({"rules": [{"from": [{"source": {"principal": ["a"]}}]}]},
     "spec.rules[0].from[0].source.principal"),
    ({"rules": [{"from": [{"source": {"ipBlocks": ["10.0.0.0/33"]}}]}]},
     "spec.rules[0].from[0].source.ipBlocks[0]"),
    ({"rules": [{"to": [{"operation": {"ports": ["http"]}}]}]},
     "spec.rules[0].to[0].operation.ports[0]"),
    ({"rules": [{"to": [{"operation": {"ports": [80]}}]}]},
     "spec.rules[0].to[0].operation.ports[0]"),
    ({"rules": [{"when": [{"key": "source.ip"}]}]}, "spec.rules[0].when[0]"),
    ({"rules": [{"when": [{"key": "source.color", "values": ["x"]}]}]},
     "spec.rules[0].when[0].key"),
    ("junk", "spec"),
])
def test_authorization_policy_spec_is_read_or_refused_by_field(
        spec: Any, problem: str | None) -> None:
    policy = build_authz(record("AuthorizationPolicy", spec))
    if problem is None:
        assert policy.problem is None, policy.problem
    else:
        assert policy.problem is not None
        assert policy.problem.startswith(problem + ":"), policy.problem


def test_defaults_are_the_documented_ones() -> None:
    policy = build_authz(record("AuthorizationPolicy", {}))
    assert policy.action is Action.ALLOW  # "Default is ALLOW if not specified."
    assert policy.rules == ()
    assert policy.selector is None
    assert build_authz(record("AuthorizationPolicy", {}, {"istio.io/dry-run": "true"})).dry_run


@pytest.mark.parametrize(("spec", "mode", "ports", "problem"), [
    ({}, Mode.UNSET, None, None),
    ({"mtls": {"mode": "STRICT"}}, Mode.STRICT, None, None),
    ({"selector": {"matchLabels": {"app": "a"}},
      "portLevelMtls": {"8080": {"mode": "DISABLE"}}}, Mode.UNSET, {8080: Mode.DISABLE}, None),
    ({"portLevelMtls": {"8080": {"mode": "DISABLE"}}}, None, None, "spec.portLevelMtls"),
    ({"mtls": {"mode": "strict"}}, None, None, "spec.mtls.mode"),
    ({"selector": {"matchLabels": {"app": "a"}}, "portLevelMtls": {"x": {}}}, None, None,
     "spec.portLevelMtls.x"),
])
def test_peer_authentication_spec_is_read_or_refused_by_field(
        spec: Any, mode: Mode | None, ports: dict[int, Mode] | None,
        problem: str | None) -> None:
    found = build_peer_authn(record("PeerAuthentication", spec))
    if problem is not None:
        assert found.problem is not None
        assert found.problem.startswith(problem + ":"), found.problem
        return
    assert found.problem is None, found.problem
    assert found.mode is mode
    assert found.port_modes == ports


@pytest.mark.parametrize(("pattern", "value", "matches"), [
    ("abc", "abc", True), ("abc", "abcd", False),
    ("abc*", "abc", True), ("abc*", "abcd", True), ("abc*", "xabc", False),
    ("*abc", "abc", True), ("*abc", "xabc", True), ("*abc", "abcx", False),
    ("*", "x", True), ("*", "", False),
])
def test_strings_match_exact_prefix_suffix_and_presence(
        pattern: str, value: str, matches: bool) -> None:
    assert string_matches(pattern, value) is matches


@pytest.mark.parametrize(("pattern", "path", "matches"), [
    ("/api/*", "/api/items", True), ("/api/{*}/x", "/api/1/x", True),
    ("/api/{*}/x", "/api/1/2/x", False), ("/api/{**}/x", "/api/1/2/x", True),
    ("/api/{*}", "/api/", False), ("/a.b/{*}", "/aXb/1", False),
])
def test_path_templates_match_segments(pattern: str, path: str, matches: bool) -> None:
    assert path_matches(pattern, path) is matches


def test_hosts_match_case_insensitively() -> None:
    assert string_matches("*.Example.com", "api.example.COM", fold=True)
