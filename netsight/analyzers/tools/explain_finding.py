"""explain_finding: what a finding means, how it was fixed before, where else it occurs.

Takes a finding as another tool returned it (its ``signature``), a signature, or a code,
and answers from the knowledge base (``netsight.knowledge``): the pattern — the code
table's description and the normalised signature — the fixes learned from the watch
stream, ranked by confidence with their counts, operators' notes, and recent occurrences.
A restricted caller sees only occurrences, fixes and notes in its namespaces. Without a
knowledge base (``netsight call``, or ``KNOWLEDGE=off``) it answers the pattern alone and
says so (``history: "disabled"``).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import ConfigDict, Field, model_validator

from netsight.analyzers.core import codes, knowledge
from netsight.analyzers.core.arguments import ToolArgs
from netsight.analyzers.core.base import metadata
from netsight.analyzers.core.contracts import ErrorCode, Model, OmitNone, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.quoting import listed
from netsight.analyzers.core.signatures import SIGNATURE_FORM
from netsight.graph.store.live import GraphView
from netsight.graph.store.scoped import ScopedView

NAME = "explain_finding"
COMPACT_RECENT, DETAIL_RECENT = 3, 50

METADATA = AnalyzerMetadata(
    name=NAME,
    description="How a finding was fixed before: learned fixes, notes, occurrences. Use it "
    "on a finding (or its signature or code) a tool reported.",
    reads=frozenset(),
    codes=(),
)



class FindingArg(Model):
    """A finding as a tool returned it; only its code and signature are read."""

    model_config = ConfigDict(extra="ignore", frozen=True)
    code: str | None = None
    signature: str | None = None


class Args(ToolArgs):
    finding: FindingArg | None = Field(default=None, description="As a tool returned it")
    signature: str | None = Field(default=None, description="Its signature")
    code: str | None = Field(default=None, description="Code, e.g. NS0101")

    @model_validator(mode="after")
    def _one_subject(self) -> Args:
        given = [n for n in ("finding", "signature", "code") if getattr(self, n) is not None]
        if len(given) != 1:
            raise ValueError(f"give exactly one of finding, signature, code (got "
                             f"{', '.join(given) or 'none'})")
        return self


class Pattern(OmitNone):
    code: str
    name: str
    description: str
    signature_pattern: str | None = None
    occurrences: int
    resolutions: int
    first_seen_at: datetime | None = None
    last_seen_at: datetime | None = None


class Fix(OmitNone):
    fix: str
    confidence: float
    count: int
    clusters: int
    last_at: datetime


class NoteEntry(Model):
    text: str
    author: str
    at: datetime


class OccurrenceEntry(OmitNone):
    object: str
    cluster: str
    appeared_at: datetime
    resolved_at: datetime | None = None
    ended_by: str | None = None


class Result(ToolResult):
    signature: str | None = Field(description="null when asked by code")
    pattern: Pattern
    suggested_fix: str | None = Field(description="The most confident fix, if any")
    fixes: list[Fix]
    notes: list[NoteEntry]
    recent_occurrences: list[OccurrenceEntry]
    affected_now: int = Field(description="Objects showing it now")
    is_new_pattern: bool = Field(description="Never recorded before")
    history: Literal["recorded", "disabled"]


def _at(seconds: float | None) -> datetime | None:
    return None if seconds is None else datetime.fromtimestamp(seconds, UTC)


def subject(args: Args) -> tuple[str | None, str | None]:
    """(signature, code) asked about; INVALID_INPUT for a malformed one."""
    signature, code = args.signature, args.code
    if args.finding is not None:
        signature, code = args.finding.signature, args.finding.code
        if code is None:
            raise ToolFailure(ErrorCode.INVALID_INPUT, "finding: a finding as a tool "
                              "returned it, with its code and signature fields", tool=NAME)
    if signature is not None and not SIGNATURE_FORM.match(signature):
        raise ToolFailure(ErrorCode.INVALID_INPUT, "signature: 12 lowercase hex digits, as "
                          "findings carry it in their signature field", tool=NAME)
    if code is not None and code not in codes.CODES:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"code: unknown finding code "
                          f"{listed([code])}; codes look like NS0101", tool=NAME)
    return signature, code


async def analyze(view: GraphView, args: Args) -> Result:
    signature, code = subject(args)
    reader = knowledge.current()
    scope = view.scope if isinstance(view, ScopedView) else None
    found = None
    if reader is not None:
        found = await reader.explain(knowledge.Query(
            signature=signature, code=None if signature else code, namespaces=scope,
            recent=DETAIL_RECENT if args.detail else COMPACT_RECENT))
    if found is not None and found.code is not None:
        code = found.code
    if code is None:  # a bare signature netsight never recorded
        where = "the knowledge base has no record of it" if reader is not None else \
            "the knowledge base is off (KNOWLEDGE=off, or netsight call)"
        raise ToolFailure(ErrorCode.NOT_FOUND, f"signature {signature}: {where}; pass the "
                          "finding itself or its code", tool=NAME)
    table = codes.CODES[code]
    if found is None:
        found = knowledge.Explanation(signature=signature, code=code, pattern=None,
                                      first_seen=None, last_seen=None, occurrences=0, open=0,
                                      clusters=0, resolutions=0, coincidences=0)
    fixes = [Fix(fix=f.fix, confidence=knowledge.confidence(f.count, found.resolutions),
                 count=f.count, clusters=f.clusters, last_at=datetime.fromtimestamp(f.last, UTC))
             for f in found.fixes]
    fixes.sort(key=lambda f: (-f.confidence, -f.count, f.fix))
    if not args.detail:
        fixes = fixes[:3]
    return Result(
        metadata=metadata(view),
        signature=signature,
        pattern=Pattern(code=code, name=table.name, description=table.description,
                        signature_pattern=found.pattern, occurrences=found.occurrences,
                        resolutions=found.resolutions, first_seen_at=_at(found.first_seen),
                        last_seen_at=_at(found.last_seen)),
        suggested_fix=fixes[0].fix if fixes else (found.notes[0].text if found.notes else None),
        fixes=fixes,
        notes=[NoteEntry(text=n.text, author=n.author, at=datetime.fromtimestamp(n.at, UTC))
               for n in found.notes],
        recent_occurrences=[
            OccurrenceEntry(object=o.object, cluster=o.cluster,
                            appeared_at=datetime.fromtimestamp(o.appeared, UTC),
                            resolved_at=_at(o.resolved), ended_by=o.resolution)
            for o in found.recent],
        affected_now=found.open,
        is_new_pattern=found.occurrences == 0,
        history="recorded" if reader is not None else "disabled",
    )


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.CORE)
