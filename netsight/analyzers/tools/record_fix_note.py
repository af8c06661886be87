"""record_fix_note: an operator's note on how a finding is fixed, for explain_finding.

The one tool that writes, and only to netsight's own knowledge base, never to the cluster:
it is in the ``notes`` toolset, which a server offers only when asked (``TOOLSETS``). A note
is kept under the finding's signature with the namespace of the object it was written
about, so a caller restricted to other namespaces never reads it; a namespace the caller
may not see answers NOT_FOUND, as one that does not exist.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StringConstraints

from netsight.analyzers.core import codes, knowledge
from netsight.analyzers.core.arguments import Namespace, ToolArgs
from netsight.analyzers.core.base import metadata, require_namespace
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure, ToolResult
from netsight.analyzers.core.declarations import AnalyzerMetadata, Tool, Toolset
from netsight.analyzers.core.quoting import listed
from netsight.analyzers.core.signatures import SIGNATURE_FORM
from netsight.graph.store.live import GraphView

NAME = "record_fix_note"
MAX_NOTE = 2000

METADATA = AnalyzerMetadata(
    name=NAME,
    description="Record how you fixed a finding (by its signature); explain_finding shows "
    "the note to whoever meets the same mistake.",
    reads=frozenset(),
    codes=(),
)


class Args(ToolArgs):
    signature: str = Field(description="The finding's signature")
    code: str = Field(description="The finding's code")
    note: Annotated[str, StringConstraints(min_length=1, max_length=MAX_NOTE,
                                           strip_whitespace=True)] = Field(
        description="What fixed it")
    namespace: Namespace | None = Field(default=None,
                                        description="The finding's namespace, if any")
    author: str = Field(default="operator", max_length=100, description="Who")


class Result(ToolResult):
    recorded: bool = Field(description="False: not kept (no knowledge base, or queue full)")
    history: Literal["recorded", "disabled"]


async def analyze(view: GraphView, args: Args) -> Result:
    if not SIGNATURE_FORM.match(args.signature):
        raise ToolFailure(ErrorCode.INVALID_INPUT, "signature: 12 lowercase hex digits, as "
                          "findings carry it in their signature field", tool=NAME)
    if args.code not in codes.CODES:
        raise ToolFailure(ErrorCode.INVALID_INPUT, f"code: unknown finding code "
                          f"{listed([args.code])}; codes look like NS0101", tool=NAME)
    # A namespace the caller may not see answers as one that does not exist.
    require_namespace(view, args.namespace, tool=NAME)
    reader = knowledge.current()
    recorded = False
    if reader is not None:
        recorded = await reader.add_note(args.signature, args.code, "", args.note,
                                         args.author, args.namespace or "")
    return Result(metadata=metadata(view), recorded=recorded,
                  history="recorded" if reader is not None else "disabled")


TOOL = Tool(METADATA, Args, Result, analyze, toolset=Toolset.NOTES, read_only=False)
