"""Gateway API hostname matching: a leading '*.' covers one or more labels, never the apex."""

from __future__ import annotations

import pytest

from netsight.analyzers.routing.hostnames import effective, intersect, matches


@pytest.mark.parametrize(("pattern", "host", "expected"), [
    ("*.example.com", "a.example.com", True),
    ("*.example.com", "a.b.example.com", True),
    ("*.example.com", "example.com", False),
    ("*.example.com", "a.example.net", False),
    ("*.example.com", "*.a.example.com", True),
    ("*.example.com", "*.example.com", True),
    ("*.a.example.com", "*.example.com", False),
    ("a.example.com", "a.example.com", True),
    ("a.example.com", "b.example.com", False),
    ("a.example.com", "*.example.com", False),
])
def test_matches(pattern: str, host: str, expected: bool) -> None:
    assert matches(pattern, host) is expected


@pytest.mark.parametrize(("a", "b", "expected"), [
    ("*.example.com", "foo.example.com", "foo.example.com"),
    ("foo.example.com", "*.example.com", "foo.example.com"),
    ("*.example.com", "*.foo.example.com", "*.foo.example.com"),
    ("*.com", "*.example.com", "*.example.com"),
    ("*.example.com", "example.com", None),
    ("foo.example.com", "bar.example.com", None),
])
def test_intersect_is_the_more_specific_hostname(a: str, b: str, expected: str | None) -> None:
    assert intersect(a, b) == expected
    assert intersect(b, a) == expected


def test_route_hostnames_outside_the_listener_are_ignored() -> None:
    # HTTPRoute.spec.hostnames: test.example.net does not count on a *.example.com listener.
    assert effective("*.example.com", ["test.example.com", "test.example.net"]) == \
        ["test.example.com"]
    assert effective("*.example.com", ["example.com"]) == []
    assert effective(None, ["a.example.com"]) == ["a.example.com"]
    assert effective("a.example.com", []) == ["a.example.com"]
    assert effective(None, []) is None
