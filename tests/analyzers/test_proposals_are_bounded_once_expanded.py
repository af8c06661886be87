"""A proposal (diff_routes ``proposed``) is bounded by its size once YAML aliases and merge
keys are expanded, not only by its bytes; nothing derived from it outlives the call.

Aliases let 0.8 MB of YAML stand for 200,000 rules, and merge keys copy a mapping's entries
into every mapping that names it: each bound (values, characters, nesting, rules, matches)
is counted on the composed document, each alias as often as it occurs, and a proposal past
one is refused naming it, before it is built. What a proposal names is then answered on an
overlay, which keeps nothing (``OverlayView.kept``), and the routing engine's shared parts
take nothing from it: after the call the live graph's derived structures hold no trace of a
proposed name.
"""

from __future__ import annotations

import functools
import gc
import types
from collections.abc import Iterator

import pytest

from netsight.analyzers.core import proposal_reading as bounds
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import call_tool
from netsight.graph.store.live import GraphStore, Source
from netsight.graph.store.overlay import OverlayView
from netsight.graph.store.scoped import ScopedView
from tests.analyzers.hostile import VISIBLE
from tests.conftest import store_from_yaml

REQUEST = {"host": "shop.example.com"}
HEAD = ("apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
        "metadata: {name: web, namespace: shop}\nspec:\n  parentRefs: [{name: gw}]\n"
        "  hostnames: [shop.example.com]\n")


def refusal(proposed: str, store: GraphStore | None = None) -> str:
    view = (store or store_from_yaml(VISIBLE, Source.CLUSTER)).view()
    with pytest.raises(ToolFailure) as failure:
        call_tool(view, "diff_routes", {**REQUEST, "proposed": proposed})
    assert failure.value.code == ErrorCode.INVALID_INPUT
    return failure.value.message


def aliases(anchor: str, key: str, count: int) -> str:
    """A route whose ``key`` lists ``count`` aliases of one anchored value."""
    return (f"{HEAD}  x: &r {anchor}\n  {key}: [" + ", ".join(["*r"] * count) + "]\n")


def test_an_alias_bomb_of_rules_is_refused_by_its_rule_count() -> None:
    message = refusal(aliases("{backendRefs: [{name: web, port: 80}]}", "rules", 200_000))
    assert f"more than {bounds.MAX_RULES} rules" in message


def test_aliased_matches_are_refused_by_their_count() -> None:
    rule = "{matches: [" + ", ".join(["*m"] * 50) + "], backendRefs: []}"
    text = (f"{HEAD}  y: &m {{path: {{value: /a}}}}\n  x: &r {rule}\n  rules: ["
            + ", ".join(["*r"] * (bounds.MAX_MATCHES // 50 + 1)) + "]\n")
    # Fewer rules than their bound, more matches than theirs.
    assert bounds.MAX_MATCHES // 50 + 1 <= bounds.MAX_RULES
    assert f"more than {bounds.MAX_MATCHES} matches" in refusal(text)


def test_aliased_values_are_refused_by_their_count() -> None:
    # A thousand values, aliased as often as the bound allows and once more.
    text = (f"{HEAD}  x: &a [" + ", ".join(["1"] * 1000) + "]\n  y: ["
            + ", ".join(["*a"] * (bounds.MAX_NODES // 1000 + 1)) + "]\n")
    assert f"more than {bounds.MAX_NODES} values" in refusal(text)


def test_an_aliased_long_string_is_refused_by_its_characters() -> None:
    text = aliases("a" * 100_000, "hostnames", 20)
    assert f"more than {bounds.MAX_CHARACTERS} characters" in refusal(text)


def test_a_merge_key_bomb_is_refused_before_it_is_built() -> None:
    # Each merge copies 2,000 entries: 1,200,000 once built, from 30 kB of text.
    text = ("a: &a {" + ", ".join(f"k{i}: 1" for i in range(2000)) + "}\nl:\n"
            + "".join("- {<<: *a}\n" for _ in range(600)))
    assert "once YAML aliases and merge keys are expanded" in refusal(text)


@pytest.mark.parametrize("text", ["a: &a [*a]", "[" * 1000 + "]" * 1000,
                                  "a:\n" + "".join(" " * i + "- \n" for i in range(1, 300))])
def test_deep_and_recursive_documents_are_refused_by_their_depth(text: str) -> None:
    assert f"nested deeper than {bounds.MAX_DEPTH} levels" in refusal(text)


def test_bounds_count_every_document_together() -> None:
    document = aliases("{backendRefs: []}", "rules", bounds.MAX_RULES // 2 + 1)
    second = document.replace("name: web", "name: other")
    assert "proposed: document 2" in refusal(f"{document}---\n{second}")


def test_a_large_proposal_without_aliases_is_not_refused_for_its_size() -> None:
    # 0.9 MB of annotations: far more text than any bound allows through aliases.
    annotations = "".join(f"    note-{i}: {'v' * 80}\n" for i in range(10_000))
    service = ("apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: shop\n"
               f"  annotations:\n{annotations}spec: {{selector: {{app: web}}, "
               "ports: [{name: http, port: 80, targetPort: http}]}\n")
    assert len(service) < 1 << 20
    view = store_from_yaml(VISIBLE, Source.CLUSTER).view()
    result = call_tool(view, "diff_routes", {**REQUEST, "proposed": service})
    assert result.proposed is not None


# --- nothing kept -----------------------------------------------------------------------

MARK = "zq-proposed"


def marked_proposal(n: int) -> str:
    """A route of shop naming, with the mark: a Gateway, a Service and a hostname each."""
    return (f"apiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\n"
            f"metadata: {{name: web, namespace: shop}}\nspec:\n"
            f"  parentRefs: [{{name: gw}}, {{name: {MARK}-gw-{n}}}]\n"
            f"  hostnames: [shop.example.com, {MARK}-{n}.example.com]\n"
            f"  rules: [{{matches: [{{path: {{type: RegularExpression, value: /{MARK}-{n}}}}}]"
            f", backendRefs: [{{name: {MARK}-svc-{n}, port: 80}}, {{name: web, port: 80}}]}}]\n")


# Not followed: the program itself (classes, functions, modules), through which everything
# is reachable.
_PROGRAM = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
            types.MethodType, types.CodeType, functools.partial)


def reachable(root: object) -> Iterator[object]:
    """Every value reachable from ``root``: containers, and the objects they hold."""
    seen: set[int] = set()
    stack = [root]
    while stack:
        item = stack.pop()
        if id(item) in seen or isinstance(item, _PROGRAM):
            continue
        seen.add(id(item))
        yield item
        if isinstance(item, str | bytes | int | float | bool | type(None)):
            continue
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        else:
            stack.extend(gc.get_referents(item))


def marked(store: GraphStore) -> list[str]:
    found = [item for root in (store.derived, store.kept) for item in reachable(root)
             if isinstance(item, str) and MARK in item]
    return sorted(set(found))


@pytest.mark.parametrize("scope", [None, frozenset({"shop"})])
def test_nothing_derived_from_a_proposal_is_kept_after_the_call(
        scope: frozenset[str] | None) -> None:
    store = store_from_yaml(VISIBLE, Source.CLUSTER)
    view = store.view() if scope is None else ScopedView(store.view(), scope)
    for n in range(3):
        for args in ({**REQUEST}, {**REQUEST, "gateway": f"shop/{MARK}-gw-{n}"},
                     {**REQUEST, "proposed": marked_proposal(n)}):
            try:
                call_tool(view, "diff_routes", args)
            except ToolFailure as failure:
                code = failure.code
            else:
                code = None
            assert code in (None, ErrorCode.NOT_FOUND)
    assert store.derived, "the live graph keeps derived parts: the test looks at them"
    assert marked(store) == []


def test_an_overlay_keeps_nothing() -> None:
    view = store_from_yaml(VISIBLE, Source.CLUSTER).view()
    overlay = OverlayView(view, {})
    overlay.kept()["anything"] = object()
    assert overlay.kept() == {}
    assert overlay.derived("anything", (), lambda _: []) is not \
        overlay.derived("anything", (), lambda _: [])



def test_two_objects_run_together_are_refused_not_merged() -> None:
    # kubectl refuses a key given twice; PyYAML alone would keep the second object's values
    # and answer for one wrong object.
    service = ("apiVersion: v1\nkind: Service\nmetadata: {name: web, namespace: shop}\n"
               "spec: {selector: {app: web}, ports: [{port: 80}]}\n")
    message = refusal(HEAD + service)
    assert "duplicate key 'apiVersion'" in message, message
    assert "line 7" in message, message
