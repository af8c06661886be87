"""The wire form of verdicts, shared by the policy tools (and whatever renders them).

Fields listed in a model's ``_detail_only`` are dropped unless the answer is asked for in
detail mode, like a Finding's detail, suggestion and evidence.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from netsight.analyzers.core.contracts import DETAIL, Evidence, Model, OmitNone, ResourceRef
from netsight.analyzers.policy.external_regions import Region, describe_region
from netsight.analyzers.policy.peer_groups import Group
from netsight.analyzers.policy.peers import IPBlock
from netsight.analyzers.policy.reach import Tally
from netsight.analyzers.policy.verdict import DirectionVerdict, Step


class DetailAware(Model):
    _detail_only: ClassVar[tuple[str, ...]] = ()
    # Kept when null: null is an answer there ("cannot be decided"), not an absence.
    _nullable: ClassVar[tuple[str, ...]] = ("allowed",)

    # Unannotated on purpose: pydantic then keeps the model's own JSON schema for output.
    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):  # type: ignore[no-untyped-def]
        model, hidden = self, dict[str, None]()
        dropped: tuple[str, ...] = ()
        if not (info.context or {}).get(DETAIL):
            dropped = self._detail_only
            # Dropped before serialising rather than after: a verdict's steps and their
            # evidence are most of what a compact answer would serialise, only to throw it
            # away.
            hidden = {name: None for name in self._detail_only
                      if getattr(self, name) is not None}
            if hidden:
                model = self.model_copy(update=hidden)
        data = handler(model)
        return {k: v for k, v in data.items()
                if (v is not None or k in self._nullable) and k not in dropped}


class StepOut(DetailAware):
    layer: str = Field(description="ANP, CNP Admin, NetworkPolicy, BANP, CNP Baseline, "
                       "default, Istio")
    action: str = Field(description="Allow, Deny, Pass or Unknown")
    text: str
    policy: ResourceRef | None = None
    rule: int | None = Field(default=None, description="Index in the policy's rule list")
    evidence: list[Evidence] | None = Field(default=None, description="Detail mode only")

    _detail_only = ("evidence",)

    @classmethod
    def of(cls, step: Step) -> StepOut:
        return cls(layer=step.layer.value, action=step.action.value, text=step.text,
                   policy=step.policy, rule=step.rule, evidence=list(step.evidence) or None)


class DirectionOut(DetailAware):
    direction: str = Field(description="egress (at the source) or ingress (at the destination)")
    at: str = Field(description="The endpoint whose policies decide this direction")
    allowed: bool | None
    path: str = Field(description="The layers in order, e.g. '[ANP] Pass: ... -> "
                      "[NetworkPolicy] Deny: ...'")
    steps: list[StepOut] | None = Field(default=None, description="Detail mode only")

    _detail_only = ("steps",)

    @classmethod
    def of(cls, verdict: DirectionVerdict, *, detail: bool = True) -> DirectionOut:
        """``detail=False``: without the steps, which only detail answers show (a compact
        answer would build them only to drop them)."""
        return cls(direction=verdict.direction.value, at=verdict.endpoint,
                   allowed=verdict.allowed, path=verdict.path(),
                   steps=[StepOut.of(s) for s in verdict.steps] if detail else None)


# --- reach: who_can_reach and what_can_reach -------------------------------------------

MEMBERS_SHOWN = 50


class PodCounts(Model):
    allowed: int
    denied: int
    unknown: int


class PeerOut(DetailAware):
    namespace: str | None = Field(default=None, description="Null outside the cluster")
    labels: dict[str, str] | None = Field(default=None, description="The identity's labels")
    cidr: str | None = Field(default=None, description="Outside the cluster: the addresses")
    except_: list[str] | None = Field(default=None, alias="except",
                                      description="Addresses inside cidr that are not meant")
    pods: int | None = Field(default=None, description="Pods of this identity (or group)")
    allowed: bool | None = Field(description="true: on every pod pair; false: only some "
                                 "pairs (see counts); null: cannot be decided (see reasons)")
    ports: list[str] | None = Field(default=None, description="Without a port in the "
                                    "query: the destination's declared ports traffic flows to")
    unknown_ports: list[str] | None = Field(default=None, description="Without a port: the "
                                            "declared ports whose verdict is undecided")
    counts: PodCounts | None = Field(default=None, description="When the fixed end has "
                                     "several pods: how many of them each outcome covers")
    split: str | None = Field(default=None, description="Set when this identity's pods were "
                              "evaluated apart: the per-pod facts that differ (pod IPs "
                              "against policy CIDRs, host network, container ports); members "
                              "lists the pods of this part")
    members: list[str] | None = Field(default=None, description=f"Pods of the group (first "
                                      f"{MEMBERS_SHOWN}); always when split, else detail "
                                      "mode only")
    reasons: list[str] | None = Field(default=None, description="Why allowed is null")


class Summary(Model):
    identities: int = Field(description="In-cluster peer groups listed (identities; a split "
                            "one counts per part)")
    allowed_pods: int = Field(description="Peer pods allowed with every pod of the fixed end")
    partial_pods: int = Field(description="Peer pods allowed with some pods of the fixed end "
                              "only")
    unknown_pods: int = Field(description="Peer pods whose verdict cannot be decided")
    denied_pods: int = Field(description="Peer pods denied (not listed)")


def summarize(found: list[tuple[Group, Tally]]) -> Summary:
    counts = {"allowed": 0, "partial": 0, "unknown": 0, "denied": 0}
    for peer, tallied in found:
        verdict = tallied.verdict
        outcome = "allowed" if verdict is True else "unknown" if verdict is None else \
            "partial" if tallied.allowed or tallied.unknown else "denied"
        counts[outcome] += len(peer.members)
    return Summary(identities=sum(1 for _, t in found if t.allowed or t.unknown),
                   allowed_pods=counts["allowed"], partial_pods=counts["partial"],
                   unknown_pods=counts["unknown"], denied_pods=counts["denied"])


def peer_out(peer: Group, tallied: Tally, *, several: bool, detail: bool) -> PeerOut:
    members = [m.name for m in peer.members[:MEMBERS_SHOWN]] \
        if peer.split is not None or detail else None
    return PeerOut(namespace=peer.namespace, labels=dict(peer.labels), pods=len(peer.members),
                   allowed=tallied.verdict,
                   counts=PodCounts(allowed=tallied.allowed, denied=tallied.denied,
                                    unknown=tallied.unknown) if several else None,
                   split=peer.split, members=members,
                   reasons=list(tallied.reasons)[:10] or None)


def region_out(region: Region, blocks: tuple[IPBlock, ...], *, several: bool) -> PeerOut:
    cidr, excepts = describe_region(region, blocks)
    tallied = region.tally
    return PeerOut.model_validate({
        "cidr": cidr, "except": excepts or None, "allowed": tallied.verdict,
        "counts": PodCounts(allowed=tallied.allowed, denied=tallied.denied,
                            unknown=tallied.unknown) if several else None,
        "reasons": list(tallied.reasons)[:10] or None})


class WhatIf(OmitNone):
    """With ``proposed``: the answer is as if those objects were applied."""

    objects: list[str] | None = Field(default=None, description="'<action> Kind/ns/name'")
    live: str | None = Field(default=None, description="The live verdict where it differs")
    by: list[str] | None = Field(default=None, description="Proposed objects deciding that")
