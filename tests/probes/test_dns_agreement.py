"""When a DNS probe agrees with check_dns_resolution's walk: the same IPv4 addresses, or
NXDOMAIN for a name the walk says does not exist; undecided where the walk cannot say."""

from __future__ import annotations

import pytest

from netsight.analyzers.probing.name_resolution import agree, expected
from netsight.analyzers.tools.check_dns_resolution import ClusterDns, Resolver, Result


def walked(outcome: str, *records: str) -> Result:
    return Result.model_validate({
        "metadata": {"clusterName": "t", "timestamp": "2026-01-01T00:00:00Z",
                     "graphGeneration": 1, "source": "manifests"},
        "name": "x", "form": "service", "outcome": outcome, "answeredBy": None,
        "answer": list(records),
        "resolver": Resolver(policy="ClusterFirst", nameservers=["10.96.0.10"], searches=[],
                             ndots=5),
        "queries": [], "findings": [], "notEvaluated": [],
        "clusterDns": ClusterDns(source="assumed", domain="cluster.local",
                                 domain_assumed=True)})


@pytest.mark.parametrize(("result", "addresses"), [
    (walked("resolves", "A 10.96.0.20", "AAAA fd00::20"), {"10.96.0.20"}),
    (walked("nxdomain"), set()),
    (walked("resolves", "CNAME db.example.com."), None),  # where it leads: not in the graph
    (walked("resolves", "A <ClusterIP of Service/a/b, allocated by the API server>"), None),
    (walked("forwarded"), None),
    (walked("undecided"), None),
])
def test_what_the_walk_expects(result: Result, addresses: set[str] | None) -> None:
    assert expected(result) == addresses


@pytest.mark.parametrize(("want", "rcode", "answers", "agrees"), [
    ({"10.96.0.20"}, "NOERROR", ["10.96.0.20"], True),
    ({"10.96.0.20"}, "NOERROR", ["10.96.0.21"], False),
    ({"10.96.0.20"}, "SERVFAIL", [], False),
    (set(), "NXDOMAIN", [], True),
    (set(), "SERVFAIL", [], False),  # a failing server is no "not there"
    (set(), "NOERROR", ["10.96.0.9"], False),
    (None, "NOERROR", ["10.96.0.9"], None),
])
def test_agreement(want: set[str] | None, rcode: str, answers: list[str],
                   agrees: bool | None) -> None:
    assert agree(want, rcode, answers) is agrees
