"""VirtualService match entries and delegate merging as Istio evaluates them: StringMatch
(exact, prefix, RE2 regex matched whole, an empty one for presence), withoutHeaders,
ignoreUriCase, what the request does not describe (undecided), and pilot's conflict rules
for a delegate's match inside its root's (model/virtualservice.go stringMatchConflict)."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.routing.istio_delegation import match_conflict, merge_rule
from netsight.analyzers.routing.istio_matches import Fit, match_fit
from netsight.analyzers.routing.istio_rules import Source, Via
from netsight.analyzers.routing.requests import Request

REQUEST = Request("shop.example.com", "/Reviews/42", "GET", {"End-User": "jason"},
                  {"debug": "1"})
MESH = Via()


def fit(match: dict[str, Any], *, port: int | None = None,
        labels: dict[str, str] | None = None) -> Fit:
    return match_fit(match, REQUEST, authority="shop.example.com", via=MESH,
                     vs_namespace="shop", port=port, source=Source("web", labels))


@pytest.mark.parametrize(("match", "expected"), [
    ({"uri": {"prefix": "/Reviews"}}, True),
    ({"uri": {"prefix": "/reviews"}}, False),  # case-sensitive unless ignoreUriCase
    ({"uri": {"prefix": "/reviews"}, "ignoreUriCase": True}, True),
    ({"uri": {"exact": "/Reviews"}}, False),
    ({"uri": {"regex": "/Reviews/[0-9]+"}}, True),
    ({"uri": {"regex": "/Reviews"}}, False),  # RE2 matched against the whole path
    ({"method": {"exact": "GET"}}, True),
    ({"method": {"exact": "POST"}}, False),
    ({"headers": {"end-user": {"exact": "jason"}}}, True),
    ({"headers": {"end-user": {"prefix": "ja"}}, "uri": {"prefix": "/x"}}, False),
    ({"headers": {"end-user": {}}}, True),  # an empty StringMatch: the header is present
    ({"headers": {"x-canary": {}}}, False),
    ({"withoutHeaders": {"x-canary": {}}}, True),
    ({"withoutHeaders": {"end-user": {"exact": "jason"}}}, False),
    ({"queryParams": {"debug": {"exact": "1"}}}, True),
    ({"authority": {"prefix": "shop."}}, True),
    ({"sourceNamespace": "web"}, True),
    ({"sourceNamespace": "shop"}, False),
    ({"gateways": ["mesh"]}, True),
    ({"gateways": ["edge"]}, False),
])
def test_a_match_entry_fits_as_envoy_would_match_it(match: dict[str, Any],
                                                     expected: bool) -> None:
    assert fit(match) is expected


@pytest.mark.parametrize(("match", "why"), [
    ({"scheme": {"exact": "https"}}, "scheme matches are not evaluated"),
    ({"port": 9080}, "the match has a port and the request gives none"),
    ({"sourceLabels": {"app": "web"}}, "the request gives no source_labels"),
    ({"uri": {"regex": "(?=x)"}}, "is not valid RE2"),
])
def test_what_the_request_does_not_describe_is_undecided(match: dict[str, Any],
                                                         why: str) -> None:
    result = fit(match)
    assert isinstance(result, str)
    assert why in result


def test_a_false_field_decides_even_beside_an_undecided_one() -> None:
    assert fit({"scheme": {"exact": "https"}, "method": {"exact": "POST"}}) is False


def test_source_labels_and_port_decide_when_given() -> None:
    assert fit({"sourceLabels": {"app": "web"}}, labels={"app": "web", "v": "1"}) is True
    assert fit({"sourceLabels": {"app": "web"}}, labels={"app": "cart"}) is False
    assert fit({"port": 9080}, port=9080) is True


@pytest.mark.parametrize(("root", "leaf", "conflict"), [
    ({"prefix": "/a"}, {"prefix": "/a/b"}, False),
    ({"prefix": "/a/b"}, {"prefix": "/a"}, True),  # the leaf is wider than the root
    ({"prefix": "/a"}, {"exact": "/a/b"}, False),
    ({"exact": "/a"}, {"prefix": "/a"}, True),
    ({"exact": "/a"}, {"exact": "/a"}, False),
    ({"regex": "/a.*"}, {"prefix": "/a"}, True),
    ({"prefix": "/a"}, {"regex": "/a.*"}, True),
    (None, {"prefix": "/b"}, False),
])
def test_a_delegate_match_must_lie_within_its_roots(root: Any, leaf: Any,
                                                    conflict: bool) -> None:
    assert match_conflict({"uri": root} if root else {}, {"uri": leaf}) is conflict


def test_a_merged_delegate_rule_inherits_what_it_does_not_set() -> None:
    root = {"match": [{"uri": {"prefix": "/r"}, "headers": {"a": {"exact": "1"}}}],
            "timeout": "5s", "delegate": {"name": "d"}}
    merged = merge_rule(root, {"match": [{"uri": {"prefix": "/r/x"},
                                          "headers": {"b": {"exact": "2"}}}],
                               "route": [{"destination": {"host": "x"}}]})
    assert merged is not None
    assert merged["timeout"] == "5s"
    assert merged["match"] == [{"uri": {"prefix": "/r/x"},
                                "headers": {"a": {"exact": "1"}, "b": {"exact": "2"}}}]
    assert merge_rule(root, {"match": [{"uri": {"prefix": "/other"}}]}) is None
