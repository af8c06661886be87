"""What a proposal would change about a request's answer (diff_routes ``proposed``): the
request resolved again on an overlay with the proposed objects applied, compared with the
live answer entry by entry, share by share and finding by finding.
"""

from __future__ import annotations

from pydantic import Field

from netsight.analyzers.core.contracts import Finding, Model
from netsight.analyzers.core.proposals import Proposal
from netsight.analyzers.routing.request_answers import (
    HIDDEN_ROUTE,
    Answer,
    BackendShare,
    Layer,
    Shadowed,
)


class ProposedObject(Model):
    object: str = Field(description='The object\'s key, e.g. "HTTPRoute/shop/web"')
    action: str = Field(description='"add", "replace", "delete" or "unchanged"')


class EntryChange(Model):
    entry: str = Field(description='"namespace/gateway/listener" or "ingress/<class>"')
    before: str | None = Field(description="What took the request live (None: not routed "
                               "through this entry)")
    after: str | None = Field(description="What would take it with the proposal applied")


class ShareChange(Model):
    entry: str
    backend: str
    port: int | None
    share_before: float | None = Field(description="Percent live (None: not a backend)")
    share_after: float | None = Field(description="Percent with the proposal (None: not "
                                      "a backend)")


class ProposedOut(Model):
    objects: list[ProposedObject]
    changed: bool = Field(description="Whether the answer differs from the live one")
    layers: list[Layer]
    backends: list[BackendShare]
    matches_expected: bool | None = None
    conflicts: list[Shadowed]
    entries_changed: list[EntryChange] = Field(
        description="Entries whose taking rule or outcome differs")
    shares_changed: list[ShareChange] = Field(description="Backend shares that differ")
    findings_appeared: list[Finding]
    findings_disappeared: list[Finding]
    not_evaluated: list[str]
    incomplete: list[str] | None = None


def _taken(layer: Layer) -> str:
    if layer.hidden:
        return f"{HIDDEN_ROUTE} ({layer.outcome})"
    if layer.undecided is not None:
        return f"undecided ({layer.undecided})"
    if layer.layer == "virtual-service" and layer.route is None and layer.backends:
        return f"no VirtualService: the default route ({layer.outcome})"
    if layer.route is None:
        return f"no rule ({layer.outcome})"
    if layer.rule is None:
        return f"{layer.kind} {layer.route}, no rule matching ({layer.outcome})"
    return f"{layer.kind} {layer.route} rule {layer.rule} ({layer.outcome})"


def _shares(answer: Answer) -> dict[tuple[str, str, int | None], float]:
    return {(layer.entry, b.backend + (f" subset {b.subset}" if b.subset else ""), b.port):
            b.share for layer in answer.layers for b in layer.backends if not b.mirror}


def _finding_key(finding: Finding) -> tuple[str, str, str]:
    return finding.code, str(finding.resource or ""), finding.summary


def compare(live: Answer, after: Answer, proposal: Proposal) -> ProposedOut:
    """The answer with ``proposal`` applied (``after``), and how it differs from ``live``."""
    before_taken = {layer.entry: _taken(layer) for layer in live.layers}
    after_taken = {layer.entry: _taken(layer) for layer in after.layers}
    entries = [EntryChange(entry=entry, before=before_taken.get(entry),
                           after=after_taken.get(entry))
               for entry in dict.fromkeys([*before_taken, *after_taken])
               if before_taken.get(entry) != after_taken.get(entry)]
    old, new = _shares(live), _shares(after)
    shares = [ShareChange(entry=entry, backend=backend, port=port,
                          share_before=old.get(key), share_after=new.get(key))
              for key in dict.fromkeys([*old, *new]) if old.get(key) != new.get(key)
              for entry, backend, port in (key,)]
    was = {_finding_key(f) for f in live.findings}
    now = {_finding_key(f) for f in after.findings}
    appeared = [f for f in after.findings if _finding_key(f) not in was]
    disappeared = [f for f in live.findings if _finding_key(f) not in now]
    changed = bool(entries or shares or appeared or disappeared) \
        or live.layers != after.layers or live.conflicts != after.conflicts
    return ProposedOut(
        objects=[ProposedObject(object=key, action=action)
                 for key, action in proposal.actions.items()],
        changed=changed,
        layers=after.layers,
        backends=list(after.reached.values()),
        matches_expected=after.matches_expected,
        conflicts=after.conflicts,
        entries_changed=entries,
        shares_changed=shares,
        findings_appeared=appeared,
        findings_disappeared=disappeared,
        not_evaluated=list(dict.fromkeys([*after.notes, *proposal.notes])),
        incomplete=list(dict.fromkeys(after.incomplete)) or None,
    )
