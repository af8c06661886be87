"""The wire form of verdicts, shared by the policy tools (and whatever renders them).

Fields listed in a model's ``_detail_only`` are dropped unless the answer is asked for in
detail mode, like a Finding's detail, suggestion and evidence.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from netsight.analyzers.core.contracts import DETAIL, Evidence, Model, ResourceRef
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
            # evidence were most of a compact find_blocking_policies answer's serialisation
            # (~60-90 us of ~100-140 a call), all of it thrown away.
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
        """``detail=False``: without the steps, which only detail answers show (built and
        dropped again, they were 7% of a compact find_blocking_policies call's handler)."""
        return cls(direction=verdict.direction.value, at=verdict.endpoint,
                   allowed=verdict.allowed, path=verdict.path(),
                   steps=[StepOut.of(s) for s in verdict.steps] if detail else None)
