"""VirtualService delegation (pilot/pkg/model/virtualservice.go).

A rule that delegates is replaced by the rules of the delegate VirtualService (one without
hosts, exported to the root's namespace), each merged with the root rule as pilot merges
them: a delegate match must be a subset of a root match, or the delegate rule is dropped;
unset fields are inherited. One level, as Istio supports.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.routing.istio_rules import Resolution, Rule, exported_to, rules_of

_INHERITED = ("rewrite", "timeout", "retries", "fault", "mirror", "mirrorPercent",
              "mirrorPercentage", "corsPolicy", "headers")


def delegated(ctx: MeshContext, rules: list[Rule], answer: Resolution) -> list[Rule]:
    """``rules`` with each delegating rule replaced by the delegate's rules merged with it
    (a delegate that is missing or not exported to the root's namespace drops the rule)."""
    if not any("delegate" in rule.spec for rule in rules):
        return rules
    delegates = {(vs.record.namespace, vs.record.name): vs
                 for vs in ctx.virtual_services if not vs.hosts}
    found: list[Rule] = []
    for rule in rules:
        target = rule.spec.get("delegate")
        if "delegate" not in rule.spec:
            found.append(rule)
            continue
        root_ns = rule.vs.record.namespace
        name = str(target.get("name") or "") if isinstance(target, Mapping) else ""
        namespace = str(target.get("namespace") or root_ns) \
            if isinstance(target, Mapping) else root_ns
        delegate = delegates.get((namespace, name))
        if delegate is None or not exported_to(delegate, root_ns):
            why = "does not exist (or has hosts)" if delegate is None else \
                f"is not exported to namespace {root_ns}"
            answer.notes.append((rule.vs.record.key, f"{rule.label} delegates to "
                                 f"VirtualService {namespace}/{name}, which {why}: Istio "
                                 "drops the rule"))
            continue
        for sub in rules_of(delegate):
            merged = merge_rule(rule.spec, sub.spec)
            if merged is None:
                answer.notes.append((delegate.record.key, f"{sub.label} conflicts with the "
                                     f"match of {rule.label} that delegates to it: Istio "
                                     "drops it"))
                continue
            found.append(Rule(delegate, sub.index, merged, root=rule))
    return found


def merge_rule(root: Mapping[str, Any], sub: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """pilot's mergeHTTPRoute: the delegate rule with the root's matches folded in and the
    root's settings where it has none; None when a delegate match conflicts."""
    root_matches = [m for m in root.get("match") or () if isinstance(m, Mapping)]
    sub_matches = [m for m in sub.get("match") or () if isinstance(m, Mapping)]
    if not root_matches:
        matches = sub_matches
    elif not sub_matches:
        matches = root_matches
    else:
        matches = []
        for leaf in sub_matches:
            fits = [_merge_match(top, leaf) for top in root_matches
                    if not match_conflict(top, leaf)]
            if not fits:
                return None
            matches.extend(fits)
    merged = dict(sub)
    merged["match"] = matches
    for key in _INHERITED:
        if merged.get(key) is None and root.get(key) is not None:
            merged[key] = root[key]
    return merged


def _merge_match(root: Mapping[str, Any], leaf: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(leaf)
    for key in ("uri", "scheme", "method", "authority"):
        if out.get(key) is None and root.get(key) is not None:
            out[key] = root[key]
    for key in ("headers", "withoutHeaders", "queryParams", "sourceLabels"):
        union = {**(root.get(key) or {}), **(leaf.get(key) or {})}
        if union:
            out[key] = union
    for key in ("port", "sourceNamespace", "gateways"):
        if not out.get(key) and root.get(key):
            out[key] = root[key]
    return out


def match_conflict(root: Mapping[str, Any], leaf: Mapping[str, Any]) -> bool:
    """pilot's hasConflict: the leaf match is not within the root match."""
    for key in ("uri", "scheme", "method", "authority"):
        if _string_conflict(root.get(key), leaf.get(key)):
            return True
    for key in ("headers", "withoutHeaders", "queryParams"):
        mine, theirs = root.get(key) or {}, leaf.get(key) or {}
        if any(_string_conflict(mine.get(k), v) for k, v in theirs.items()):
            return True
    if bool(root.get("ignoreUriCase")) != bool(leaf.get("ignoreUriCase")):
        return True
    if root.get("port") and leaf.get("port") and root["port"] != leaf["port"]:
        return True
    if root.get("sourceNamespace") and leaf.get("sourceNamespace") != root["sourceNamespace"]:
        return True
    labels = root.get("sourceLabels") or {}
    if any(k in labels and labels[k] != v for k, v in (leaf.get("sourceLabels") or {}).items()):
        return True
    mine, theirs = root.get("gateways") or [], leaf.get("gateways") or []
    return bool(mine and theirs and not set(theirs) <= set(mine))


def _string_conflict(root: Any, leaf: Any) -> bool:
    """pilot's stringMatchConflict."""
    if not isinstance(root, Mapping) or not isinstance(leaf, Mapping):
        return False
    if root.get("regex") and (leaf.get("regex") or leaf.get("prefix") or leaf.get("exact")):
        return True
    if leaf.get("regex") and (root.get("regex") or root.get("prefix") or root.get("exact")):
        return True
    exact = root.get("exact")
    if exact:
        return bool(leaf.get("prefix")) or leaf.get("exact") != exact
    prefix = root.get("prefix")
    if prefix:
        if leaf.get("prefix"):
            return not str(leaf["prefix"]).startswith(str(prefix))
        if leaf.get("exact"):
            return not str(leaf["exact"]).startswith(str(prefix))
    return True
