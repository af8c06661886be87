"""check_dns_resolution's active half, pure: what the graph expects a probe to be answered,
whether what it was answered agrees, and why not when it does not.

The server runs the DNS probe from the asking pod (netsight/server/probe_tools.py) and hands
its rcode and answers here; the static answer is check_dns_resolution's own.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

from netsight.analyzers.probing.explanations import Cause, Explanation, Likelihood
from netsight.analyzers.tools import check_dns_resolution as static

# rcodes of a server that failed to answer, as against one that said the name is not there.
FAILED = frozenset({"SERVFAIL", "TIMEOUT", "REFUSED"})


def expected(result: static.Result) -> set[str] | None:
    """The IPv4 addresses the graph says the name resolves to (an A question); the empty
    set for a name that does not exist; None where the graph cannot say (a name forwarded
    upstream, an undecided query, a CNAME out of the cluster)."""
    if result.outcome == "nxdomain":
        return set()
    if result.outcome != "resolves":
        return None
    addresses = set()
    for record in result.answer:  # "A 10.96.0.10", "AAAA fd00::a", "CNAME db.example.com."
        kind, _, value = record.partition(" ")
        if kind == "AAAA":
            continue
        if kind != "A":
            return None  # a CNAME: where it leads is not the graph's to know
        try:
            addresses.add(str(ipaddress.IPv4Address(value)))
        except ValueError:
            return None  # an address the graph does not know (a ClusterIP not yet set)
    return addresses


def agree(expected: set[str] | None, rcode: str, answers: Sequence[str]) -> bool | None:
    """Whether the probe was answered as the graph expects: the same addresses, or, for a
    name expected not to exist, NXDOMAIN; None where the graph cannot say."""
    if expected is None:
        return None
    if not expected:
        return rcode == "NXDOMAIN"
    return rcode == "NOERROR" and set(answers) == expected


def explain(result: static.Result, rcode: str, answers: Sequence[str],
            error: str | None) -> list[Explanation]:
    """Why the probe's answer differs from the graph's, likeliest first."""
    nameservers = ", ".join(result.resolver.nameservers) or "none"
    if rcode in FAILED:
        return [Explanation(
            cause=Cause.DNS, likelihood=Likelihood.HIGH,
            summary=f"cluster DNS failed to answer ({rcode}) rather than saying the name is "
            "not there: the DNS pods are down, overloaded or cannot reach their upstream; "
            "the name itself is not at fault",
            evidence=[f"the pod asks {nameservers}",
                      f"the graph answers {result.name!r}: {result.outcome}"
                      + (f" ({', '.join(result.answer[:4])})" if result.answer else ""),
                      *([error] if error else [])])]
    if result.outcome == "nxdomain":
        return [Explanation(
            cause=Cause.GRAPH_STALE, likelihood=Likelihood.MEDIUM,
            summary="cluster DNS knows a record the graph does not: a Service not yet seen, "
            "or one in a namespace or of a kind netsight does not watch",
            evidence=[f"{result.name!r} answered {', '.join(answers[:4]) or rcode}"])]
    return [Explanation(
        cause=Cause.GRAPH_STALE, likelihood=Likelihood.MEDIUM,
        summary="cluster DNS answers otherwise than the graph: a Service or pod changed "
        "moments ago (DNS caches answers for up to 30 s), or one the graph has not seen",
        evidence=[f"the graph answers {', '.join(result.answer[:4]) or 'nothing'}; the "
                  f"probe got {rcode} {', '.join(answers[:4])}".rstrip()])]
