"""What a tool and an analyze_config check declare: one typed value per module, which the
catalog, the list of checks and the meta-tests read."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Generic, TypeVar

from netsight.analyzers.core.arguments import ToolArgs
from netsight.analyzers.core.codes import Code
from netsight.analyzers.core.contracts import Finding, ToolResult
from netsight.analyzers.core.tool_schemas import ArgsSchema, ResultShape
from netsight.graph.store.live import GraphView

A = TypeVar("A", bound=ToolArgs)
R = TypeVar("R", bound=ToolResult)


@dataclass(frozen=True, slots=True)
class AnalyzerMetadata:
    """Declared up front so the registry can be checked: name, purpose, inputs, outputs."""

    name: str
    description: str
    reads: frozenset[str]  # kinds the analyzer reads from the graph
    codes: tuple[Code, ...]  # finding codes it may report
    # It shows Kubernetes Events (the event ring): a one-shot call lists them too.
    events: bool = False


class Toolset(StrEnum):
    """A group of tools a server can be limited to (``--toolsets``, as kubernetes-mcp-server
    groups its tools); each tool declares the one it belongs to."""

    CORE = "core"  # Services, findings over a namespace, recent changes
    POLICY = "policy"  # who may connect to whom: network and Istio policies
    ROUTING = "routing"  # Gateway API, Ingress, where a request goes
    MESH = "mesh"  # Istio configuration
    # Tools that run probe pods: offered only where probes are enabled (--probes).
    PROBES = "probes"
    # Writes operators' notes to netsight's own knowledge base: offered only when asked for.
    NOTES = "notes"
    # Policy what-if across many flows (diff_reachability): offered when asked for.
    WHATIF = "whatif"
    # Health of the CNI, mesh and gateway controllers: offered when asked for (the default
    # tool list is full).
    PROVIDERS = "providers"
    # Kubernetes Events about networking objects: offered when asked for (--toolsets events).
    EVENTS = "events"


# What a server offers when no toolsets are named.
DEFAULT_TOOLSETS = frozenset(Toolset) - {Toolset.NOTES, Toolset.WHATIF, Toolset.PROVIDERS,
                                         Toolset.EVENTS}


@dataclass(frozen=True, slots=True)
class Check:
    """One analyze_config check: its metadata and the findings it reports over a namespace
    (``None``: the whole graph)."""

    metadata: AnalyzerMetadata
    run: Callable[[GraphView, str | None], Iterator[Finding]]


@dataclass(frozen=True, slots=True)
class Tool(Generic[A, R]):
    """One MCP tool: typed arguments -> ``run`` -> typed result.

    ``run`` may return an awaitable, for tools that wait (probes); analyzers answer at once.
    ``prepare``, where given, does the work on the arguments alone that grows with their
    size (reading a proposal's YAML): a server runs it off its event loop before ``run``,
    which otherwise does that work itself.
    """

    metadata: AnalyzerMetadata
    args: type[A]
    result: type[R]
    run: Callable[[GraphView, A], R | Awaitable[R]]
    toolset: Toolset = field(kw_only=True)  # the group `--toolsets` offers it with
    # The provider whose CRDs the tool needs X;
    # a live server offers the tool only while the cluster serves them. None: always.
    provider: str | None = None
    read_only: bool = True
    # Reaches past the graph into the cluster's data plane (a probe): MCP's openWorldHint.
    open_world: bool = False
    prepare: Callable[[A], None] | None = None
    # Whether ``prepare`` has work for these arguments (None: always): a call without any
    # is not sent off the loop and back.
    prepares: Callable[[A], bool] | None = None

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def description(self) -> str:
        return self.metadata.description

    def input_schema(self) -> dict[str, Any]:
        return self.args.model_json_schema(schema_generator=ArgsSchema)

    def output_schema(self) -> dict[str, Any]:
        return self.result.model_json_schema(mode="serialization", schema_generator=ResultShape)
