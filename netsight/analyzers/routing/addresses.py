"""A Gateway's requested addresses (``spec.addresses``): what the manifests decide of them.

Which addresses a Gateway gets is the controller's and the network's: netsight can tell a
type the class says it does not support, and an address the Gateway's own status shows
assigned, but not whether an address is free or usable. Gateway API v1 ``GatewaySpec``:
static addresses are Extended support (feature ``GatewayStaticAddresses``), an entry
without a value asks the controller to choose one (``GatewayAddressEmpty``: "If an
implementation does not support an empty value, they MUST set the Programmed condition in
status to False with a reason of AddressNotAssigned"), and domain-prefixed types are
implementation-specific. An unsupported address makes the Gateway Accepted=False with
reason UnsupportedAddress (conformance GatewayStaticAddresses).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from netsight.analyzers.routing import conditions as c
from netsight.analyzers.routing.gateway_objects import (
    GATEWAY,
    as_list,
    as_map,
    is_gateway_api,
    opt_str,
    spec_of,
    status_of,
)
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView

UNSUPPORTED_ADDRESS = "UnsupportedAddress"
ADDRESS_NOT_ASSIGNED = "AddressNotAssigned"
STATIC_ADDRESSES = "GatewayStaticAddresses"
EMPTY_ADDRESS = "GatewayAddressEmpty"
_CORE_TYPES = frozenset({"IPAddress", "Hostname"})


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the requested addresses make of the Gateway's conditions (None: no effect)."""

    accepted: c.Cond | None = None
    programmed: c.Cond | None = None


def judge(gateway: Record, features: frozenset[str] | None) -> Verdict:
    """``features``: the class's supportedFeatures, None when its controller publishes none."""
    observed = [as_map(a) for a in as_list(status_of(gateway).get("addresses"))]
    undecided_accept: list[str] = []
    unsupported: list[str] = []
    pending: list[str] = []
    not_assigned: list[str] = []
    for i, raw in enumerate(as_list(spec_of(gateway).get("addresses"))):
        entry = as_map(raw)
        kind = opt_str(entry.get("type")) or "IPAddress"
        value = opt_str(entry.get("value"))
        what = f"spec.addresses[{i}] ({kind} {value or '(any)'})"
        if _assigned(observed, kind, value):
            continue  # the controller shows it in the Gateway's status
        # A value names a static address (GatewayStaticAddresses); none asks the
        # controller to choose one of the type (GatewayAddressEmpty).
        feature = STATIC_ADDRESSES if value is not None else EMPTY_ADDRESS
        if kind not in _CORE_TYPES:
            undecided_accept.append(f"{what}: the address type is implementation-specific")
        elif features is None:
            undecided_accept.append(f"{what}: whether the controller supports it ({feature}) "
                                    "is not published")
        elif feature not in features and value is not None:
            unsupported.append(f"{what}: the GatewayClass does not list {feature} among its "
                               "supportedFeatures")
            continue
        if value is None and features is not None and feature not in features:
            not_assigned.append(f"{what}: the GatewayClass does not list {feature} among "
                                "its supportedFeatures")
        else:
            pending.append(what)
    if unsupported:
        why = "; ".join(unsupported)
        return Verdict(c.false(UNSUPPORTED_ADDRESS, why),
                       c.false(c.INVALID, f"not accepted: {why}"))
    accepted = c.unknown("; ".join(undecided_accept)) if undecided_accept else None
    if not_assigned:
        return Verdict(accepted, c.false(ADDRESS_NOT_ASSIGNED, "; ".join(not_assigned)))
    programmed = c.unknown(f"whether the controller can assign {', '.join(pending)} is not "
                           "evaluated (the Gateway's status shows no such address)") \
        if pending else None
    return Verdict(accepted, programmed)


def _assigned(observed: list[Mapping[str, object]], kind: str, value: str | None) -> bool:
    return any((opt_str(a.get("type")) or "IPAddress") == kind
               and (value is None or a.get("value") == value) for a in observed)


def gateways_at(view: GraphView, address: str) -> Iterator[Record]:
    """Gateways holding ``address``: assigned (status) or, where no status says, requested
    (a manifest's spec), for callers naming a Gateway as ``ip:ADDR``."""
    for record in view.for_each(GATEWAY):
        if not is_gateway_api(record):
            continue
        held = as_list(status_of(record).get("addresses")) or \
            as_list(spec_of(record).get("addresses"))
        if any(as_map(a).get("value") == address for a in held):
            yield record
