"""Every cache of the analyzers is bounded twice: by its number of entries, and by what an
entry can hold, so that no caller fills memory by asking many questions or long ones.

Module-level caches (``functools.lru_cache``) are found by walking the package: each must
have a ``maxsize`` and an entry in ``LONG_KEYS``, a call with a key longer than anything it
caches (a pattern, hostname or address of a proposal or an argument can be megabytes),
which must leave it as it was. What is kept with a view (``GraphView.derived``/``kept``) is
keyed by graph objects, except where a caller's words reach it: the Gateways a shared
resolver keeps (a missing name is not kept, see test_proposals_are_bounded_once_expanded)
and the named-port answers of the policy universe, keyed by the port a caller asks about.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterator
from typing import Any

import netsight.analyzers
from netsight.analyzers.core import regex
from netsight.analyzers.policy.peers import IPBlock
from netsight.analyzers.policy.universe import NAMED_KEPT, universe
from netsight.analyzers.routing.requests import host_rank
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import Source
from tests.analyzers.hostile import VISIBLE
from tests.conftest import store_from_yaml

LONG = "a" * 100_000
# The cache (module.function it wraps) -> a call with a key it must not keep.
LONG_KEYS: dict[str, Callable[[], Any]] = {
    "netsight.analyzers.core.regex._compile": lambda: (regex.judge(LONG),
                                                       regex.fullmatcher(LONG)),
    "netsight.analyzers.routing.requests._rank": lambda: (host_rank(LONG),
                                                          host_rank("*." + LONG)),
    "netsight.analyzers.policy.peers._parse_plain": lambda: IPBlock.parse(
        "10.0.0.0/8", [], "spec").contains("fe80::1%" + LONG),
}


def caches() -> Iterator[tuple[str, Any]]:
    """Each lru_cache of a module of netsight.analyzers: (what it wraps, the cache)."""
    for module in pkgutil.walk_packages(netsight.analyzers.__path__, "netsight.analyzers."):
        for value in vars(importlib.import_module(module.name)).values():
            if callable(getattr(value, "cache_info", None)) and hasattr(value, "__wrapped__"):
                wrapped = value.__wrapped__
                yield f"{wrapped.__module__}.{wrapped.__qualname__}", value


def test_every_cache_is_bounded_by_entries_and_listed() -> None:
    found = dict(caches())
    assert sorted(found) == sorted(LONG_KEYS), "add a long-key call for the new cache"
    for name, cache in found.items():
        assert cache.cache_parameters()["maxsize"] is not None, name


def test_no_cache_keeps_a_long_key() -> None:
    for name, cache in caches():
        before = cache.cache_info().currsize
        LONG_KEYS[name]()
        assert cache.cache_info().currsize == before, name


NAMED_PORT_POLICY = """
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: named, namespace: shop}
spec:
  podSelector: {matchLabels: {app: client}}
  policyTypes: [Egress]
  egress: [{ports: [{port: http}]}]
"""


def test_named_port_answers_are_kept_for_a_bounded_number_of_ports() -> None:
    view = store_from_yaml(VISIBLE + NAMED_PORT_POLICY, Source.CLUSTER).view()
    for port in range(1, NAMED_KEPT + 50):
        call_tool(view, "what_can_reach", {"source": "shop/client", "port": port,
                                           "limit": 1})
    assert 0 < len(universe(view).named) <= NAMED_KEPT
