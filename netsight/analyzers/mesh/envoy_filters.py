"""EnvoyFilter patches that depend on the order filters are applied in, or that the
operation they use does not apply to (istioctl's envoyfilter.EnvoyPatchAnalyzer).

Istio applies EnvoyFilters by priority, then by creation time. A patch that acts on
something another patch may add or move (REMOVE, REPLACE, INSERT_BEFORE, INSERT_AFTER)
is only reliable when its filter has a priority (NS0720). Where an earlier patch (in
istioctl's order: the filters by namespace and name, each one's patches in spec order)
matches a proxyVersion and patches a filter of the same name, an upgrade that changes the
proxy version changes which patches apply, so the relative patch is reported as such
instead (NS0724). REPLACE applies only to HTTP and network filters (NS0721); istioctl
reports ADD and REMOVE on ROUTE_CONFIGURATION and HTTP_ROUTE as ignored (NS0722, NS0723).

As istioctl, each kind of finding is made once per EnvoyFilter (its detail lists every
patch concerned), and a configPatch without a patch ends the reading of the filter: Istio's
validation refuses such a filter, which is reported as not evaluated past that entry.
"""

from __future__ import annotations

from collections.abc import Container

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.codes import Code
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import ENVOY_FILTER, ConfigPatch, EnvoyFilter

__all__ = ["ENVOY_FILTER", "patches"]

RELATIVE = frozenset({"REMOVE", "REPLACE", "INSERT_BEFORE", "INSERT_AFTER"})
ROUTE_TARGETS = frozenset({"ROUTE_CONFIGURATION", "HTTP_ROUTE"})
REPLACEABLE = frozenset({"HTTP_FILTER", "NETWORK_FILTER"})


def patches(ctx: MeshContext) -> None:
    filters = ctx.envoy_filters  # one that cannot be read is reported (NS0650)
    if not any(ctx.in_scope(f.record) for f in filters):
        return
    unknown = ctx.view.unreadable(ENVOY_FILTER)
    if unknown is not None:
        # Whether a patch follows one matching a proxyVersion depends on every filter.
        ctx.skip("EnvoyFilter patches", unknown)
        return
    # Names patched under a proxyVersion so far -> the first patch that did.
    versioned: dict[tuple[str, str], str] = {}
    for envoy_filter in filters:  # key order: istioctl's
        found: dict[str, list[ConfigPatch]] = {}
        for patch in envoy_filter.patches:
            code = verdict(patch, envoy_filter.priority, versioned)
            if code is not None:
                found.setdefault(code.code, []).append(patch)
            if patch.proxy_version:
                versioned.setdefault(patch.name, f"EnvoyFilter {envoy_filter.record.ref} "
                                     f"{patch.path} (proxyVersion '{patch.proxy_version}')")
        if not ctx.in_scope(envoy_filter.record):
            continue
        for code_id, hits in found.items():
            earlier = sorted({versioned[p.name] for p in hits if p.name in versioned}) \
                if code_id == codes.ENVOY_FILTER_RELATIVE_PATCH_WITH_PROXY_VERSION.code else []
            _report(ctx, envoy_filter, codes.CODES[code_id], hits, earlier)
        if envoy_filter.missing_patch is not None:
            _report_missing_patch(ctx, envoy_filter, envoy_filter.missing_patch)


def verdict(patch: ConfigPatch, priority: int,
            versioned: Container[tuple[str, str]]) -> Code | None:
    """The finding one patch makes, given the names earlier patches patched under a
    proxyVersion; None when it makes none."""
    operation, target = patch.operation, patch.apply_to
    if operation == "ADD":
        return codes.ENVOY_FILTER_ADD_IGNORED if target in ROUTE_TARGETS else None
    if operation == "REMOVE" and target in ROUTE_TARGETS:
        return codes.ENVOY_FILTER_REMOVE_IGNORED
    if operation == "REPLACE" and target not in REPLACEABLE:
        return codes.ENVOY_FILTER_REPLACE_NOT_APPLICABLE
    if operation in RELATIVE and priority == 0:
        return codes.ENVOY_FILTER_RELATIVE_PATCH_WITH_PROXY_VERSION \
            if patch.name in versioned else codes.ENVOY_FILTER_RELATIVE_PATCH
    return None


def _describe(patch: ConfigPatch) -> str:
    return f"{patch.path} ({patch.operation} on {patch.apply_to}, {patch.shown_name})"


_WHY = {
    "NS0720": ("has no priority and patches relative to other configuration: {patches}",
               "What a relative patch acts on must be there when it is applied; without a "
               "priority that depends on the order EnvoyFilters are applied in.",
               "Give the EnvoyFilter a priority, or use ADD or INSERT_FIRST."),
    "NS0721": ("REPLACEs what REPLACE does not apply to: {patches}",
               "REPLACE applies only to HTTP_FILTER and NETWORK_FILTER; the patch is "
               "ignored.",
               "Use MERGE (or REMOVE then ADD) for other targets."),
    "NS0722": ("ADDs to routes: {patches}",
               "istioctl reports ADD on ROUTE_CONFIGURATION or HTTP_ROUTE as ignored.",
               "Use MERGE on ROUTE_CONFIGURATION, or INSERT_BEFORE/AFTER/FIRST on "
               "HTTP_ROUTE."),
    "NS0723": ("REMOVEs routes: {patches}",
               "istioctl reports REMOVE on ROUTE_CONFIGURATION or HTTP_ROUTE as ignored.",
               "Change the route configuration with MERGE instead."),
    "NS0724": ("has no priority and patches relative to a filter an earlier patch matching "
               "a proxyVersion patches too: {patches}",
               "When an upgrade changes the proxy version, the proxyVersion patch stops (or "
               "starts) applying and the relative patch meets different configuration.",
               "Give the EnvoyFilter a priority, or use ADD or INSERT_FIRST."),
}


def _report(ctx: MeshContext, envoy_filter: EnvoyFilter, code: Code,
            hits: list[ConfigPatch], earlier: list[str]) -> None:
    record = envoy_filter.record
    summary, detail, suggestion = _WHY[code.code]
    listed = ", ".join(_describe(p) for p in hits)
    if earlier:
        detail += f" The earlier patch: {'; '.join(earlier)}."
    ctx.report(code.finding(
        ref(record), f"EnvoyFilter {record.ref} " + summary.format(patches=listed),
        detail=detail,
        suggestion=suggestion,
        evidence=[evidence(record, f"{p.path}.patch.operation", p.operation) for p in hits],
    ))


def _report_missing_patch(ctx: MeshContext, envoy_filter: EnvoyFilter, index: int) -> None:
    record = envoy_filter.record
    path = f"spec.configPatches[{index}].patch"
    ctx.report(codes.MESH_CONFIG_NOT_EVALUATED.finding(
        ref(record), f"EnvoyFilter {record.ref} {path} is missing: the configPatches from "
        f"[{index}] on are not evaluated",
        detail="Istio's validation refuses an EnvoyFilter whose configPatch has no patch; "
        "istioctl stops reading the filter there, and so does netsight.",
        suggestion="Give every configPatch a patch (operation and value), or remove the "
        "entry.",
        evidence=[evidence(record, path, None)],
    ))
