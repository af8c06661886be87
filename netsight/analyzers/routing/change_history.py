"""What changed on a request's path since an earlier answer (diff_routes ``against``): the
change ring's entries, newest first, for the objects the request goes through (entries,
the routes that take or lose it, backend Services) and those related to them.

``against`` is a graph generation, an RFC 3339 time or a duration back from now; what the
ring no longer holds is said, not left out silently.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from datetime import UTC, datetime

from pydantic import Field

from netsight.analyzers.core.contracts import ErrorCode, Model, ToolFailure
from netsight.analyzers.core.quoting import quoted, shortened
from netsight.analyzers.routing.gateway_objects import GATEWAY, ROUTE_KINDS
from netsight.analyzers.routing.request_answers import Layer, Shadowed
from netsight.graph.model.kinds import Kind, make_key
from netsight.graph.store.live import Change, GraphView

_LIMIT = 20
# Matched whole, ASCII digits only ("²" is a digit to str.isdigit, and no number to int).
_DURATION = re.compile(r"(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", re.ASCII)
# More digits than this (past leading zeros) reach back before 1970 in any unit, and are
# no graph generation either: refused before int() reads them.
_DIGITS = 18


class ChangeOut(Model):
    generation: int
    type: str = Field(description="ADDED, MODIFIED or DELETED")
    object: str = Field(description='The object\'s key, e.g. "HTTPRoute/shop/web"')
    fields: list[str] = Field(description="Record fields that changed (MODIFIED)")
    around: str | None = Field(default=None, description="The object of the request's path "
                               "it relates to, when it is not one itself (a pod of a backend)")
    at: str = Field(description="When netsight took the change in (RFC 3339, UTC)")


def _iso(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


def _since_time(value: str, now: float, tool: str) -> float:
    """A time from an RFC 3339 timestamp or a duration back from ``now``."""
    duration = _DURATION.fullmatch(value)
    if duration is not None and any(duration.groups()):
        if any(len(g.lstrip("0")) > _DIGITS for g in duration.groups() if g):
            back = float("inf")
        else:
            days, hours, minutes, seconds = (int(g or 0) for g in duration.groups())
            back = (((days * 24 + hours) * 60 + minutes) * 60 + seconds)
        if back > now:
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: {quoted(value)} reaches "
                              "back before 1970; give a shorter duration ('10m', '2h', '1d'), "
                              "an RFC 3339 time or a graph generation", tool=tool)
        return now - back
    try:
        when = datetime.fromisoformat(value)
        since = when.timestamp() if when.tzinfo is not None else 0.0
        _iso(since)  # fails for a time whose UTC form is before year 1 ('0001-01-01T00:00+01:00')
    except (ValueError, OverflowError, OSError):
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: {quoted(value)} is neither a graph "
                          "generation, an RFC 3339 time ('2025-06-01T10:00:00Z') nor a "
                          "duration ('10m', '2h', '1d')", tool=tool) from None
    if when.tzinfo is None:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: {quoted(value)} has no time zone; "
                          "add 'Z' (UTC) or an offset such as '+02:00'", tool=tool)
    if since > now:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: {value} is in the future (now "
                          f"is {_iso(now)})", tool=tool)
    return since


def _held_changes(view: GraphView, against: int | str, notes: list[str],
                  tool: str) -> Iterator[Change]:
    """The changes since ``against``, newest first (read lazily: the caller stops after
    a few); a bad ``against`` fails here, before any is read."""
    horizon = view.change_horizon()
    if isinstance(against, str) and against.isascii() and against.isdigit() \
            and len(against.lstrip("0")) > _DIGITS:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: generation {shortened(against)} "
                          f"is ahead of the graph (now at {view.generation})", tool=tool)
    if isinstance(against, int) or (against.isascii() and against.isdigit()):
        generation = int(against)
        if generation < 0:
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: generation "
                              f"{quoted(generation)} is negative; give 0 or more", tool=tool)
        if generation > view.generation:
            raise ToolFailure(ErrorCode.INVALID_INPUT, f"against: generation "
                              f"{quoted(generation)} is ahead of the graph (now at "
                              f"{view.generation})", tool=tool)
        if generation < horizon.generation:
            notes.append(f"against: changes up to generation {horizon.generation} are no "
                         "longer held (the change ring keeps the newest); what changed "
                         f"between generation {generation} and then is unknown")
        return view.changes_since(generation, newest_first=True)
    since = _since_time(against, time.time(), tool)
    if since < horizon.at:
        notes.append(f"against: changes before {_iso(horizon.at)} (generation "
                     f"{horizon.generation}) are no longer held (the change ring keeps the "
                     f"newest); what changed between {_iso(since)} and then is unknown")
    if since < horizon.started_at:
        notes.append(f"against: netsight's graph starts at {_iso(horizon.started_at)}; what "
                     "changed before is unknown, and what it loaded then is listed as ADDED")
    return view.changes_since(0, at=since, newest_first=True)


def changes(view: GraphView, against: int | str, involved: set[str], notes: list[str], *,
            tool: str) -> list[ChangeOut]:
    """The changes since ``against`` to the objects ``involved`` (keys) or related to
    them, newest first, at most a few; a bad ``against`` fails here."""
    found = []
    for change in _held_changes(view, against, notes, tool):
        # A route matters only if it is on the path itself (taken or shadowed): every route
        # of the entry Gateway is related to it, most without bearing on this request.
        is_route = change.key.partition("/")[0] in ROUTE_KINDS
        around = None if change.key in involved or is_route else \
            next((key for key in change.related if key in involved), None)
        if change.key in involved or around is not None:
            found.append(ChangeOut(generation=change.generation, type=change.type.value,
                                   object=change.key, fields=list(change.fields),
                                   around=around, at=_iso(change.at)))
            if len(found) == _LIMIT:
                break
    return found


def involved(layers: list[Layer], conflicts: list[Shadowed]) -> set[str]:
    """Keys of the objects on the request's path: entries, routes (the rules that took it
    and those they shadow) and backend Services."""
    keys = {make_key(c.kind, *c.route.split("/", 1)) for c in conflicts}
    for layer in layers:
        if layer.layer == "gateway-api" and not layer.entry_hidden:
            namespace, name, _ = layer.entry.split("/", 2)
            keys.add(make_key(GATEWAY, namespace, name))
        if layer.route is not None and layer.kind is not None:
            namespace, _, name = layer.route.partition("/")
            keys.add(make_key(layer.kind, namespace, name))
        for backend in layer.backends:
            namespace, _, name = backend.backend.partition("/")
            keys.add(make_key(Kind.SERVICE, namespace, name))
    return keys
