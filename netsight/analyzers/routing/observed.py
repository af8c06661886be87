"""The status the cluster's own controller wrote, set beside what netsight computes.

Route status: ``status.parents[]`` entries, matched to a parentRef by group, kind,
namespace, name, sectionName and port, and to the Gateway's controller by
``controllerName``. Gateway status: ``status.conditions`` and ``status.listeners[]`` by
name. Only condition *status* is compared: reasons differ between conformant
implementations for the same state.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    GATEWAY_GROUP,
    ParentRef,
    Route,
    as_list,
    as_map,
    conditions_of,
    opt_port,
    opt_str,
    status_of,
)
from netsight.graph.model.records import Record

Observed = dict[str, Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class ListenerObserved:
    conditions: Observed
    attached_routes: int | None
    supported_kinds: tuple[str, ...] | None


def route_parent(route: Route, ref: ParentRef, controller: str | None) -> Observed | None:
    """Conditions the controller wrote for this parentRef, or None if it wrote none."""
    for entry in as_list(status_of(route.record).get("parents")):
        entry = as_map(entry)
        if controller is not None and entry.get("controllerName") not in (None, controller):
            continue
        raw = as_map(entry.get("parentRef"))
        group = raw.get("group")
        if ((GATEWAY_GROUP if group is None else group) == ref.group
                and (opt_str(raw.get("kind")) or GATEWAY) == ref.kind
                and (opt_str(raw.get("namespace")) or route.record.namespace) == ref.namespace
                and raw.get("name") == ref.name
                and opt_str(raw.get("sectionName")) == ref.section_name
                and opt_port(raw.get("port")) == ref.port):
            return conditions_of(entry.get("conditions"))
    return None


def gateway(record: Record) -> tuple[Observed | None, dict[str, ListenerObserved]]:
    status = status_of(record)
    raw_conditions = status.get("conditions")
    conditions = conditions_of(raw_conditions) if raw_conditions else None
    listeners = {}
    for entry in as_list(status.get("listeners")):
        entry = as_map(entry)
        name = entry.get("name")
        if not isinstance(name, str):
            continue
        kinds = entry.get("supportedKinds")
        listeners[name] = ListenerObserved(
            conditions_of(entry.get("conditions")),
            opt_port(entry.get("attachedRoutes")),
            tuple(str(as_map(k).get("kind")) for k in as_list(kinds))
            if kinds is not None else None,
        )
    return conditions, listeners


def disagreements(computed: Mapping[str, c.Cond], observed: Observed | None) -> list[str]:
    """Condition types whose status the controller set otherwise than netsight computed."""
    if not observed:
        return []
    return [kind for kind, cond in computed.items()
            if cond.status != c.UNKNOWN and kind in observed
            and observed[kind].get("status") not in (None, cond.status)]
