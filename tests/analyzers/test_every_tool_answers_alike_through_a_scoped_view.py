"""Every analyzer reads the graph only through GraphView reads that ScopedView restricts: over
a scope of every namespace, each testdata case answers exactly as over the whole graph (no
UnscopedRead, no object lost), and over a scope of one namespace (or none) exactly as over a
graph that never held the others.

diff_routes is the exception by design: a route in a namespace the caller may not read can
still take their request on a shared Gateway, so precedence is decided on the whole graph
and the answer shows the outcome without naming what is hidden. So are a route's parents: a
Gateway in a namespace the caller may not read accepts or refuses their route all the same,
and only the outcome is shown. So is a listener's
attachedRoutes: routes of every namespace attach to a shared Gateway (the number its
controller writes in the Gateway's status), so the count is the whole graph's, and the rest
of the answer is as if only the scope existed. So are a Gateway's ListenerSets (GEP-1713):
those of every namespace take ports and count in attachedListenerSets, so they are decided on
the whole graph, and the ones the caller may read are shown as the whole graph decides them.

And so are references out of the scope: a visible Gateway's certificate Secret, CA ConfigMap
or backend client certificate in another namespace, the ReferenceGrant that permits it, a
visible route's backend Service (its endpoints, its BackendTLSPolicy) or mesh parent Service
there resolve or not on the whole graph. For a tool that follows such references, "as if only
its namespaces existed" is therefore: as a view of the same scope over a graph holding the
scope and, of the other namespaces, only the objects of the kinds those references reach
(``REFERENCE_KINDS``), which that view cannot read either. The answer may so depend on the
hidden objects the scope's references name, and on nothing else there; and it never names a
hidden object that no visible object names (``hidden_names``)."""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from netsight.analyzers.core.calling import to_json
from netsight.analyzers.core.contracts import ToolFailure
from netsight.analyzers.tools import TOOLS, call_tool
from netsight.graph.model.kinds import Kind, parse_key
from netsight.graph.store.live import GraphStore, GraphView, Source
from netsight.graph.store.scoped import ScopedView
from tests.analyzers.test_testdata import CASES, load_case
from tests.conftest import store_from_yaml


def answer(view: GraphView, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    try:
        data = to_json(call_tool(view, tool, args), detail=True)
    except ToolFailure as failure:
        return {"error": failure.to_error(tool).model_dump(mode="json")}
    data.get("metadata", {}).pop("timestamp", None)
    return data


@pytest.mark.parametrize("case", CASES, ids=[f"{c.parent.name}/{c.name}" for c in CASES])
def test_a_scope_of_every_namespace_changes_no_answer(case: Path) -> None:
    query, _, _ = load_case(case)
    store = whole_graph(case)
    args = {"detail": True, **query.get("args", {})}
    if "limit" in TOOLS[query["tool"]].args.model_fields:
        args.setdefault("limit", 500)
    view = store.view()
    whole = answer(view, query["tool"], args)
    # Every namespace: those holding objects, and those only a malformed object named.
    everywhere = view.namespaces() | {p.namespace for p in view.problems() if p.namespace}
    scoped = answer(ScopedView(view, everywhere), query["tool"], args)
    assert scoped == whole, json.dumps(scoped, indent=1)[:2000]


def only(cluster: str, source: Source, namespaces: frozenset[str],
         everywhere: frozenset[str] = frozenset()) -> GraphView:
    """The same input with the objects (and Namespaces) of every other namespace taken out,
    but for those of the kinds ``everywhere``; those are kept as the whole graph has them,
    and seen only through a view of ``namespaces`` (their namespaces do not exist for it)."""
    store = store_from_yaml(cluster, source)
    for kind in list(store.state.by_kind):
        if kind in everywhere:
            continue
        keep = {key for key in store.state.keys_of(kind) if visible(key, namespaces)}
        store.remove_kind(kind, keep)
    store.problems = {key: p for key, p in store.problems.items()
                      if (p.namespace in namespaces if p.namespace else
                          p.object_kind != Kind.NAMESPACE or p.name in namespaces)}
    store.changes.clear()
    # Events about objects of the other namespaces were never seen either (cluster-scoped
    # objects' events are nobody's namespace's, as the objects are).
    for event in list(store.events.events.values()):
        if event.namespace and event.namespace not in namespaces:
            store.events.forget(event)
    kept = any(not visible(key, namespaces) for kind in everywhere
               for key in store.state.keys_of(kind))
    return ScopedView(store.view(), namespaces) if kept else store.view()


def visible(key: str, namespaces: frozenset[str]) -> bool:
    kind, namespace, name = parse_key(key)
    if namespace:
        return namespace in namespaces
    return kind != Kind.NAMESPACE or name in namespaces


# What a reference from a visible object may reach in another namespace: a Gateway
# listener's certificate Secret and CA ConfigMap, its backend client certificate, and the
# ReferenceGrant that permits each.
LISTENER_REFERENCES = frozenset({"Secret", "ConfigMap", "ReferenceGrant"})
# A route's too: its backend Services (with their endpoints and BackendTLSPolicies) and the
# Services a consumer route's parentRefs name.
ROUTE_REFERENCES = LISTENER_REFERENCES | {"Service", "EndpointSlice", "BackendTLSPolicy"}
# A route's parents are decided on the whole graph: a Gateway in a namespace the caller may
# not read accepts or refuses their route all the same (what its controller writes in the
# route's status), its listeners and messages left out. The same holds for an Istio Gateway
# a VirtualService binds to (analyze_config's mesh checks) and the Secrets its servers name,
# and for a ListenerSet a route names as its parent (with the Gateway it names).
GATEWAY_KINDS = frozenset({"Gateway", "Gateway.networking.istio.io", "Secret",
                           "ListenerSet", "XListenerSet"})
# The kinds of the other namespaces each tool's answer may depend on (and no other).
REFERENCE_KINDS = {
    "check_gateway_status": LISTENER_REFERENCES,
    "gateway_get": LISTENER_REFERENCES,
    "gateway_list": LISTENER_REFERENCES,
    "check_route_resolution": ROUTE_REFERENCES | GATEWAY_KINDS,
    "analyze_config": ROUTE_REFERENCES | GATEWAY_KINDS,
}


def hidden_names(data: Any, store: GraphStore, cluster: str, namespaces: frozenset[str],
                 args: dict[str, Any]) -> list[str]:
    """Each "namespace/name" of a namespace outside the scope the answer holds, but for those
    a visible object itself names (a reference in its spec, which the caller reads anyway)
    and those the caller named in the arguments."""
    text = json.dumps(data)
    asked = [value for value in args.values() if isinstance(value, str)]
    hidden = store.view().namespaces() - namespaces
    if not hidden:
        return []
    visible_strings = [strings for namespace, strings in documents(cluster)
                       if namespace is None or namespace in namespaces]
    pattern = rf"(?<![\w.-])({'|'.join(map(re.escape, sorted(hidden)))})/([\w.-]+)"
    named = []
    for namespace, name in set(re.findall(pattern, text)):
        # Named in the arguments: as "namespace/name", or as the Service's DNS name (a
        # diff_routes host such as name.namespace.svc).
        if any(f"{namespace}/{name}" in value or value.startswith(f"{name}.{namespace}.svc")
               for value in asked):
            continue
        if not any(any(namespace in x for x in strings) and any(name in x for x in strings)
                   for strings in visible_strings):
            named.append(f"{namespace}/{name}")
    return sorted(named)


@functools.cache
def documents(cluster: str) -> list[tuple[str | None, frozenset[str]]]:
    """Each document of the input: its namespace (None: none given) and its strings."""
    try:
        docs = [d for d in yaml.safe_load_all(cluster) if isinstance(d, dict)]
    except yaml.YAMLError:
        return []  # the case is about input that does not parse: nothing is visible
    found = []
    for doc in docs:
        items = [doc]
        if isinstance(doc.get("items"), list):  # a List: each item is its own object
            items = [i for i in doc["items"] if isinstance(i, dict)]
        for item in items:
            metadata = item.get("metadata")
            namespace = metadata.get("namespace") if isinstance(metadata, dict) else None
            found.append((str(namespace) if namespace else None,
                          frozenset(_strings(item))))
    return found


def _strings(data: Any) -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            yield str(key)
            yield from _strings(value)
    elif isinstance(data, list):
        for value in data:
            yield from _strings(value)
    elif data is not None:
        yield str(data)


# Tools whose Gateway, listener, route parent and backend statuses are the cluster's: each one
# a scoped answer shows is the whole graph's.
STATUS_OF_THE_CLUSTER = {"check_gateway_status", "gateway_get", "gateway_list",
                         "check_route_resolution"}
_STATUSES = ("True", "False", "Unknown")
_IDENTITY = ("gateway", "name", "route", "parent", "backend", "kind", "policy")


def statuses(data: Any, where: tuple[str, ...] = ()) -> Iterator[tuple[Any, ...]]:
    """(where, status, reason) of every condition in an answer, and (where, "resolved",
    resolved, reason) of every backend; ``where`` names it by the identifying fields and
    keys on the way to it, not by list positions (a scope lists fewer objects)."""
    if isinstance(data, dict):
        if data.get("status") in _STATUSES and "reason" in data:
            yield where, data["status"], data["reason"]
        if isinstance(data.get("resolved"), bool):
            yield where, "resolved", data["resolved"], data.get("reason")
        here = where + tuple(f"{key}={data[key]}" for key in _IDENTITY
                             if isinstance(data.get(key), str))
        for key, value in data.items():
            yield from statuses(value, (*here, key))
    elif isinstance(data, list):
        for value in data:
            yield from statuses(value, where)


# Tools whose listeners' attachedRoutes count routes of every namespace (a number only).
COUNTS_EVERY_NAMESPACE = {"check_gateway_status", "gateway_get", "gateway_list"}
_ATTACHMENT = ("attachedRoutes", "attachedRoutesUndecided")


def attachment_left_out(data: Any) -> Any:
    """An answer without attachedRoutes and what follows from it (a controller status that
    disagrees on it, notes on routes left out of it)."""
    if isinstance(data, dict):
        kept = {}
        for key, value in data.items():
            if key == "disagrees":
                value = [x for x in value if x != "attachedRoutes"] or None
            if key not in _ATTACHMENT and value is not None:
                kept[key] = attachment_left_out(value)
        return kept
    if isinstance(data, list):
        return [attachment_left_out(x) for x in data
                if "attachedRoutes" not in (x if isinstance(x, str) else
                                            str(x.get("summary", "")) if isinstance(x, dict)
                                            else "")]
    return data


def attachment_counts(data: Any) -> list[tuple[str, str, Any, Any]]:
    """(gateway, listener, attachedRoutes, attachedRoutesUndecided) of every listener."""
    gateways = data.get("gateways") or ([data["gateway"]] if "gateway" in data else [])
    return sorted((g.get("gateway", g.get("name", "")), ls["name"], ls.get("attachedRoutes"),
                   ls.get("attachedRoutesUndecided"))
                  for g in gateways for ls in g.get("listeners", []))


_LISTENER_SETS = ("attachedListenerSets", "attachedListenerSetsUndecided", "listenerSets")


def listener_sets(data: Any) -> list[tuple[str, tuple[Any, Any], list[Any]]]:
    """(gateway, (attachedListenerSets, ...Undecided), the ListenerSets shown) of each."""
    gateways = data.get("gateways") or ([data["gateway"]] if "gateway" in data else [])
    return sorted(((g["gateway"], (g.get("attachedListenerSets"),
                                   g.get("attachedListenerSetsUndecided")),
                    g.get("listenerSets", [])) for g in gateways), key=lambda x: x[0])


def listener_sets_left_out(data: Any) -> Any:
    """An answer without its ListenerSets, their counts, findings and notes."""
    if isinstance(data, dict):
        return {key: listener_sets_left_out(value) for key, value in data.items()
                if key not in _LISTENER_SETS}
    if isinstance(data, list):
        return [listener_sets_left_out(x) for x in data
                if "ListenerSet" not in (x if isinstance(x, str) else
                                         str(x.get("summary", "")) if isinstance(x, dict)
                                         else "")]
    return data


LOADED = {case: load_case(case) for case in CASES}  # read once while collecting


@functools.cache
def whole_graph(case: Path) -> GraphStore:
    """The case's graph, loaded once for the module: the tests only read it (the graph of a
    scope alone is loaded afresh by ``only``, which cuts it down)."""
    query, _, cluster = LOADED[case]
    return store_from_yaml(cluster, Source(query.get("source", "manifests")))


SCOPES = [(case, scope) for case in LOADED
          for scope in ("", *sorted(whole_graph(case).view().namespaces()))]
WHOLE_GRAPH_TOOLS = {"diff_routes"}  # decide on the whole graph, show only the scope
# Answer from the change ring, the history of how the graph came to be: ``only`` cuts a graph
# down rather than building it, so its ring holds no history to compare with. A scope's
# history is the whole graph's, restricted to the scope.
HISTORY_TOOLS = {"recent_changes": ("changes", "page", "oldestHeld")}
ALONE_SCOPES = [(c, s) for c, s in SCOPES if LOADED[c][0]["tool"] not in WHOLE_GRAPH_TOOLS]
WHOLE_SCOPES = [(c, s) for c, s in SCOPES if LOADED[c][0]["tool"] in WHOLE_GRAPH_TOOLS]


@pytest.mark.parametrize(("case", "scope"), ALONE_SCOPES,
                         ids=[f"{c.parent.name}/{c.name}[{s or '-'}]" for c, s in ALONE_SCOPES])
def test_a_scoped_view_answers_as_if_only_its_namespaces_existed(case: Path,
                                                                  scope: str) -> None:
    query, _, cluster = load_case(case)
    source = Source(query.get("source", "manifests"))
    store = whole_graph(case)
    args = {"detail": True, **query.get("args", {})}
    if "limit" in TOOLS[query["tool"]].args.model_fields:
        args.setdefault("limit", 500)
    namespaces = frozenset({scope} - {""})
    scoped = answer(ScopedView(store.view(), namespaces), query["tool"], args)
    alone = answer(only(cluster, source, namespaces,
                        REFERENCE_KINDS.get(query["tool"], frozenset())), query["tool"], args)
    for data in (scoped, alone):
        data.get("metadata", {}).pop("graphGeneration", None)
    assert not hidden_names(scoped, store, cluster, namespaces, args)
    whole = answer(store.view(), query["tool"], args)
    if query["tool"] in STATUS_OF_THE_CLUSTER and "error" not in scoped:
        # What the scope's references resolve to is the whole graph's, not the alone graph's
        # (which hides them from its caller just the same).
        assert set(statuses(scoped)) <= set(statuses(whole)), \
            sorted(set(statuses(scoped)) - set(statuses(whole)))
    if query["tool"] in COUNTS_EVERY_NAMESPACE and "error" not in scoped:
        assert listener_sets(scoped) == [
            (gateway, counts, [s for s in sets if s["listenerSet"].split("/")[0] in namespaces])
            for gateway, counts, sets in listener_sets(whole)
            if gateway in {g for g, _, _ in listener_sets(scoped)}]
        scoped, alone = listener_sets_left_out(scoped), listener_sets_left_out(alone)
        shown = {(g, ls) for g, ls, _, _ in attachment_counts(scoped)}
        assert attachment_counts(scoped) == [
            count for count in attachment_counts(whole) if count[:2] in shown]
        scoped, alone = attachment_left_out(scoped), attachment_left_out(alone)
    if query["tool"] in HISTORY_TOOLS and "error" not in scoped:
        assert scoped["changes"] == [change for change in whole["changes"]
                                     if visible(change["resource"], namespaces)]
        history = HISTORY_TOOLS[query["tool"]]
        scoped, alone = ({k: v for k, v in data.items() if k not in history}
                         for data in (scoped, alone))
    assert scoped == alone, json.dumps(scoped, indent=1)[:2000]


@pytest.mark.parametrize(("case", "scope"), WHOLE_SCOPES,
                         ids=[f"{c.parent.name}/{c.name}[{s or '-'}]" for c, s in WHOLE_SCOPES])
def test_a_scoped_request_gets_the_whole_graphs_outcome_without_hidden_names(
        case: Path, scope: str) -> None:
    query, _, cluster = load_case(case)
    store = whole_graph(case)
    args = {"detail": True, **query.get("args", {})}
    view = store.view()
    namespaces = frozenset({scope} - {""})
    whole = answer(view, query["tool"], args)
    scoped = answer(ScopedView(view, namespaces), query["tool"], args)
    if "error" in scoped:
        return  # e.g. the entry Gateway is hidden: NOT_FOUND, as for a missing one
    # What the caller named, and what visible routes name, is theirs to read back.
    assert not hidden_names(scoped, store, cluster, namespaces, args)
    outcomes = {layer["entry"]: layer for layer in whole["layers"]}
    # A Gateway the caller may not read that routes the request is a layer all the same,
    # unnamed: the whole graph's layers on hidden Gateways, in order, are those.
    behind = [layer for layer in whole["layers"] if layer["layer"] == "gateway-api"
              and layer["entry"].partition("/")[0] not in namespaces]
    unnamed = [layer for layer in scoped["layers"] if layer.get("entryHidden")]
    assert [layer["outcome"] for layer in unnamed] == [layer["outcome"] for layer in behind]
    for layer, original in zip(unnamed, behind, strict=True):
        assert "port" not in layer
        if layer.get("hidden"):
            assert original["route"].partition("/")[0] not in namespaces
        else:
            assert layer.get("route") == original.get("route")
    for layer in scoped["layers"]:
        if layer["layer"] != "gateway-api" or layer.get("entryHidden"):
            continue
        assert layer["outcome"] == outcomes[layer["entry"]]["outcome"]
        if layer.get("hidden"):
            taken_in = outcomes[layer["entry"]]["route"].partition("/")[0]
            assert taken_in not in namespaces
        else:
            assert layer.get("route") == outcomes[layer["entry"]].get("route")
