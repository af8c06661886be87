"""HTTPRouteMatch semantics: whole path elements for prefixes, case-insensitive header names,
exact method, query parameters; and the precedence order of match specificity."""

from __future__ import annotations

from typing import Any

import pytest

from netsight.analyzers.routing.requests import (
    Request,
    grpc_matches,
    grpc_rank,
    is_grpc,
    match_rank,
    matches,
)


def prefix(value: str) -> dict[str, Any]:
    return {"path": {"type": "PathPrefix", "value": value}}


@pytest.mark.parametrize(("spec", "path", "expected"), [
    (prefix("/foo"), "/foo", True),
    (prefix("/foo"), "/foo/", True),
    (prefix("/foo"), "/foo/bar", True),
    (prefix("/foo"), "/foobar", False),
    (prefix("/foo/"), "/foo", True),
    (prefix("/"), "/anything", True),
    ({"path": {"type": "Exact", "value": "/foo"}}, "/foo", True),
    ({"path": {"type": "Exact", "value": "/foo"}}, "/foo/", False),
    ({"path": {"type": "RegularExpression", "value": "/v[0-9]+/.*"}}, "/v2/x", True),
    ({"path": {"type": "RegularExpression", "value": "/v[0-9]+"}}, "/v2/x", False),
    ({}, "/", True),
])
def test_path(spec: dict[str, Any], path: str, expected: bool) -> None:
    assert matches(spec, Request("h", path)) is expected


def test_headers_method_and_query() -> None:
    spec = {**prefix("/"), "method": "POST",
            "headers": [{"name": "X-Env", "value": "prod"}],
            "queryParams": [{"name": "v", "type": "RegularExpression", "value": "[12]"}]}
    request = Request("h", "/x", "POST", {"x-env": "prod"}, {"v": "2"})
    assert matches(spec, request)
    assert not matches(spec, Request("h", "/x", "GET", {"x-env": "prod"}, {"v": "2"}))
    assert not matches(spec, Request("h", "/x", "POST", {"x-env": "Prod"}, {"v": "2"}))
    assert not matches(spec, Request("h", "/x", "POST", {"x-env": "prod"}, {"v": "3"}))
    assert not matches(spec, Request("h", "/x", "POST", {}, {"v": "2"}))


def test_rank_orders_exact_then_prefix_length_then_method_headers_query() -> None:
    ordered = [
        {"path": {"type": "Exact", "value": "/a"}},
        prefix("/a/b"),
        {**prefix("/a"), "method": "GET"},
        {**prefix("/a"), "headers": [{"name": "x", "value": "1"}, {"name": "y", "value": "2"}]},
        {**prefix("/a"), "headers": [{"name": "x", "value": "1"}]},
        {**prefix("/a"), "queryParams": [{"name": "q", "value": "1"}]},
        prefix("/a"),
    ]
    ranks = [match_rank(spec) for spec in ordered]
    assert ranks == sorted(ranks, reverse=True)
    assert len(set(ranks)) == len(ranks)


def test_grpc_method_match_reads_service_and_method_from_the_path() -> None:
    request = Request("h", "/shop.Cart/Get", "POST", {"Content-Type": "application/grpc"})
    assert is_grpc(request)
    assert not is_grpc(Request("h", "/shop.Cart/Get", "POST"))
    assert grpc_matches({"method": {"service": "shop.Cart", "method": "Get"}}, request)
    assert grpc_matches({"method": {"service": "shop.Cart"}}, request)
    assert grpc_matches({}, request)
    assert not grpc_matches({"method": {"service": "shop.Cart", "method": "Put"}}, request)
    assert grpc_matches({"method": {"type": "RegularExpression", "method": "G.*"}}, request)
    assert grpc_rank({"method": {"service": "shop.Cart", "method": "Get"}}) > \
        grpc_rank({"method": {"service": "shop.Cart"}})


@pytest.mark.parametrize(("given", "host"), [
    ("Shop.Example.com", "shop.example.com"), ("shop.example.com:8443", "shop.example.com"),
    ("[2001:db8::1]:80", "2001:db8::1"), ("[2001:db8::1]", "2001:db8::1"),
    ("2001:db8::1", "2001:db8::1"), ("10.0.0.1:80", "10.0.0.1"),
])
def test_the_request_host_drops_only_the_port(given: str, host: str) -> None:
    from netsight.analyzers.routing.requests import request_host

    assert request_host(given) == host
