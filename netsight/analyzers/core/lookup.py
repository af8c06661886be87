"""What a caller's :class:`ObjectName` stands for, for an argument that names one kind (or
a few): its kind, namespace and name, or a ToolFailure naming the argument and what to send.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.core.object_names import ObjectName
from netsight.analyzers.core.quoting import quoted
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import Record, ServiceRecord
from netsight.graph.store.live import GraphView

# The objects of the argument's kinds that hold an address (a Service its ClusterIP).
AtAddress = Callable[[GraphView, str], Iterable[Record]]


@dataclass(frozen=True, slots=True)
class Named:
    kind: str | None  # None: any of the argument's kinds
    namespace: str
    name: str

    @property
    def ref(self) -> str:
        """'namespace/name', as answers name objects."""
        return f"{self.namespace}/{self.name}"


def services_at(view: GraphView, address: str) -> Iterable[Record]:
    """Services whose ClusterIP is ``address`` (canonical form, as the API server writes)."""
    return (s for s in view.for_each(Kind.SERVICE)
            if isinstance(s, ServiceRecord) and address in s.cluster_ips)


def locate(view: GraphView, name: ObjectName, kinds: Sequence[str], *, argument: str,
           tool: str, at_address: AtAddress | None = None) -> Named:
    """The object of one of ``kinds`` that ``name`` stands for; whether it exists is the
    caller's to check (its NOT_FOUND names the objects that do)."""
    def fail(code: ErrorCode, message: str) -> ToolFailure:
        return ToolFailure(code, f"{argument}: {message}", tool=tool)

    kind_names = " or ".join(kinds)
    forms = f"'namespace/name' or '{kinds[0]}/namespace/name'"
    if name.address is not None:
        if at_address is None:
            raise fail(ErrorCode.INVALID_INPUT, f"an address names no {kind_names}; give {forms}")
        found = sorted({(r.kind, r.namespace, r.name) for r in at_address(view, name.address)})
        if not found:
            raise fail(ErrorCode.NOT_FOUND, f"no {kind_names} has the address {name.address}; "
                       f"give {forms}")
        if len(found) > 1:
            listed = ", ".join(f"{k}/{ns}/{n}" for k, ns, n in found)
            raise fail(ErrorCode.INVALID_INPUT, f"{name.address} is the address of {listed}; "
                       "name one of them")
        kind, namespace, short = found[0]
        return Named(kind, namespace, short)
    if name.kind is not None and name.kind not in kinds:
        said = "a Service's DNS name" if name.dns else f"a {name.kind}"
        raise fail(ErrorCode.INVALID_INPUT, f"{quoted(str(name))} is {said}; {argument} names a "
                   f"{kind_names}: give {forms}")
    if name.namespace is None:
        raise fail(ErrorCode.INVALID_INPUT, f"{quoted(str(name))} has no namespace; give {forms}")
    return Named(name.kind, name.namespace, name.name)
