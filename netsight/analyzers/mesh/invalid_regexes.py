"""Regular expressions in VirtualService matches that Envoy would refuse
(istioctl's virtualservice.RegexAnalyzer).

Envoy compiles every ``regex`` StringMatch of a route with Google's RE2, so the judge here
is RE2 itself (``analyzers.regex``), not Python's ``re``: RE2 refuses look-around and
backreferences that ``re`` accepts, and accepts ``\\C`` and ``\\pN`` classes ``re`` does
not know. istioctl compiles with Go's ``regexp``,
which follows RE2's syntax. Envoy also refuses a regex whose compiled program is larger
than the runtime key ``re2.max_program_size.error_level``, which Istio's bootstrap sets
to 32768 (pilot's extractRuntimeFlags): RE2 reports the program size, so that is judged
too (istioctl does not check it).

The fields are upstream's: an http match's uri, scheme, method, authority, headers and
queryParams, and corsPolicy.allowOrigins; withoutHeaders are not checked, as upstream
(they are undocumented there).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.core import codes
from netsight.analyzers.core.base import evidence, ref
from netsight.analyzers.core.regex import Verdict, judge
from netsight.analyzers.mesh.context import MeshContext
from netsight.analyzers.mesh.istio_objects import (
    VIRTUAL_SERVICE,
    Unreadable,
    VirtualService,
    istio_records,
    read_virtual_service,
)
from netsight.graph.model.records import GenericRecord
from netsight.graph.store.live import GraphView

# Istio's bootstrap runtime flag re2.max_program_size.error_level (Envoy's default is 100).
ISTIO_MAX_PROGRAM_SIZE = 32768
_MATCH_FIELDS = ("uri", "scheme", "method", "authority")
_MAP_FIELDS = ("headers", "queryParams")


@dataclass(frozen=True, slots=True)
class Regex:
    """One ``regex`` StringMatch, with where it is written."""

    pattern: str
    path: str  # e.g. spec.http[0].match[1].headers.end-user.regex
    field: str  # upstream's name for the field: uri, headers, corsPolicy.allowOrigins, ...


def _regex(raw: Any, path: str, field: str) -> Iterator[Regex]:
    # A StringMatch of another shape is the schema's business (MeshConfigNotEvaluated).
    if isinstance(raw, Mapping):
        pattern = raw.get("regex")
        if isinstance(pattern, str) and pattern:
            yield Regex(pattern, f"{path}.regex", field)


def regexes(vs: VirtualService) -> Iterator[Regex]:
    """Every regex StringMatch of the VirtualService's http rules, in spec order."""
    spec = vs.record.spec
    http = spec.get("http") if isinstance(spec, Mapping) else None
    if not isinstance(http, list):
        return
    for i, rule in enumerate(http):
        if not isinstance(rule, Mapping):
            continue
        matches = rule.get("match")
        for j, match in enumerate(matches if isinstance(matches, list) else ()):
            if not isinstance(match, Mapping):
                continue
            where = f"spec.http[{i}].match[{j}]"
            for field in _MATCH_FIELDS:
                yield from _regex(match.get(field), f"{where}.{field}", field)
            for field in _MAP_FIELDS:
                entries = match.get(field)
                if isinstance(entries, Mapping):
                    for key, value in entries.items():
                        yield from _regex(value, f"{where}.{field}.{key}", field)
        cors = rule.get("corsPolicy")
        origins = cors.get("allowOrigins") if isinstance(cors, Mapping) else None
        for j, origin in enumerate(origins if isinstance(origins, list) else ()):
            yield from _regex(origin, f"spec.http[{i}].corsPolicy.allowOrigins[{j}]",
                              "corsPolicy.allowOrigins")


def _judged(view: GraphView) -> tuple[tuple[GenericRecord, Regex, Verdict], ...]:
    """Every regex Envoy would refuse, over all VirtualServices (kept with the store until
    a VirtualService changes; those that cannot be read are MeshConfigNotEvaluated's)."""
    refused = []
    for record in istio_records(view, VIRTUAL_SERVICE):
        try:
            vs = read_virtual_service(record)
        except Unreadable:
            continue
        for found in regexes(vs):
            verdict = judge(found.pattern)
            if verdict.error is not None or verdict.program_size > ISTIO_MAX_PROGRAM_SIZE:
                refused.append((record, found, verdict))
    return tuple(refused)


def invalid_regexes(ctx: MeshContext) -> None:
    refused = ctx.view.derived(("mesh_config", "regexes"), (VIRTUAL_SERVICE,), _judged)
    for record, found, verdict in refused:
        if not ctx.in_scope(record):
            continue
        if verdict.error is not None:
            ctx.report(codes.VIRTUAL_SERVICE_INVALID_REGEX.finding(
                ref(record), f"VirtualService {record.ref} {found.field} regex "
                f"{found.pattern!r} is not valid RE2: {verdict.error}",
                detail=f"Envoy compiles {found.path} with RE2, which refuses it "
                f"({verdict.error}); Istio's validation rejects the VirtualService, or "
                "the proxies refuse the route configuration that carries it. RE2 has "
                "no look-around and no backreferences.",
                suggestion="Rewrite the expression in RE2 syntax (see "
                "github.com/google/re2/wiki/Syntax), or use an exact or prefix "
                "match.",
                evidence=[evidence(record, found.path, found.pattern)],
            ))
        elif verdict.program_size > ISTIO_MAX_PROGRAM_SIZE:
            ctx.report(codes.VIRTUAL_SERVICE_REGEX_TOO_LARGE.finding(
                ref(record), f"VirtualService {record.ref} {found.field} regex at "
                f"{found.path} compiles to an RE2 program of {verdict.program_size}, "
                f"over Envoy's limit of {ISTIO_MAX_PROGRAM_SIZE}",
                detail="Envoy refuses a regex whose compiled RE2 program is larger "
                "than re2.max_program_size.error_level, which Istio sets to "
                f"{ISTIO_MAX_PROGRAM_SIZE}; the proxies refuse the route "
                "configuration that carries it.",
                suggestion="Simplify the expression (large counted repetitions such "
                "as {1000} multiply its size), or split it across match entries.",
                evidence=[evidence(record, found.path, found.pattern)],
            ))
