"""The shapes every tool answers in: findings, errors, metadata, pages.

Pydantic models serialised to camelCase JSON. They are the contract agents read, so field
names and enum values are stable. Compact mode (the default) drops ``detail``,
``suggestion`` and ``evidence`` from findings at serialisation time; analyzers always build
the full finding and never need to know which mode was asked for.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)
from pydantic.alias_generators import to_camel

# Context key read by the serialisers below; set by the tool runner.
DETAIL = "detail"


class Severity(StrEnum):
    CRITICAL = "critical"
    WARNING = "warning"
    INFO = "info"
    OK = "ok"

    @property
    def rank(self) -> int:
        """0 for the most severe; sorts findings worst first."""
        return _SEVERITY_RANK[self]


_SEVERITY_RANK = {Severity.CRITICAL: 0, Severity.WARNING: 1, Severity.INFO: 2, Severity.OK: 3}


class Category(StrEnum):
    ROUTING = "routing"
    DNS = "dns"
    TLS = "tls"
    POLICY = "policy"
    MESH = "mesh"
    CONNECTIVITY = "connectivity"


class ErrorCode(StrEnum):
    PROVIDER_NOT_FOUND = "PROVIDER_NOT_FOUND"
    CRD_NOT_AVAILABLE = "CRD_NOT_AVAILABLE"
    INVALID_INPUT = "INVALID_INPUT"
    NOT_FOUND = "NOT_FOUND"
    INTERNAL_ERROR = "INTERNAL_ERROR"
    PROBE_TIMEOUT = "PROBE_TIMEOUT"
    PROBE_LIMIT_REACHED = "PROBE_LIMIT_REACHED"
    AUTH_FAILED = "AUTH_FAILED"
    FORBIDDEN = "FORBIDDEN"


class Model(BaseModel):
    """camelCase on the wire, snake_case in Python; unknown fields rejected on input."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        serialize_by_alias=True,
        extra="forbid",
        frozen=True,
    )


class OmitNone(Model):
    """Drops absent optional fields from the JSON, keeping compact answers small."""

    # Unannotated on purpose: pydantic then keeps the model's own JSON schema for output.
    @model_serializer(mode="wrap")
    def _omit_none(self, handler: SerializerFunctionWrapHandler):  # type: ignore[no-untyped-def]
        data = handler(self)
        return {k: v for k, v in data.items() if v is not None}


class ResourceRef(OmitNone):
    kind: str
    name: str
    namespace: str | None = None
    api_version: str | None = None

    def __str__(self) -> str:
        ns = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind}/{ns}{self.name}"


class Evidence(OmitNone):
    """The exact field that causes a finding."""

    resource: ResourceRef
    field_path: str
    value: Any = None


class Finding(Model):
    code: str = Field(description="Stable finding code from netsight's code table, e.g. NS0101")
    severity: Severity
    category: Category
    resource: ResourceRef | None = None
    summary: str = Field(description="One line")
    equivalent_codes: list[str] | None = Field(
        default=None, description="istioctl (IST....) or Kiali (KIA....) codes with this meaning"
    )
    detail: str | None = Field(default=None, description="Detail mode only")
    suggestion: str | None = Field(default=None, description="Detail mode only")
    evidence: list[Evidence] | None = Field(default=None, description="Detail mode only")
    signature: str | None = Field(
        default=None, description="Hash of the mistake's normalised shape; explain_finding "
        "takes it")

    def with_summary(self, summary: str) -> Finding:
        """This finding with another summary. The other fields, validated already and
        immutable, are shared rather than validated again: for analyzers that give one
        finding per entry of every answer (diff_routes), where validating each copy would
        weigh on the whole answer. Built through pydantic's pickling protocol
        (``__getstate__``)."""
        state = self.__getstate__()
        state["__dict__"] = {**state["__dict__"], "summary": summary}
        copy = Finding.__new__(Finding)
        copy.__setstate__(state)
        return copy

    @model_serializer(mode="wrap")
    def _compact(self, handler: SerializerFunctionWrapHandler, info: SerializationInfo):  # type: ignore[no-untyped-def]
        data = handler(self)
        if not (info.context or {}).get(DETAIL):
            for name in ("detail", "suggestion", "evidence"):
                data.pop(name, None)
        return {k: v for k, v in data.items() if v is not None}


class ToolError(OmitNone):
    code: ErrorCode
    message: str = Field(description="What went wrong and what to change")
    tool: str
    detail: str | None = None


class ToolFailure(Exception):
    """Raised by analyzers and runners; carries the ToolError agents receive."""

    def __init__(
        self, code: ErrorCode, message: str, *, tool: str = "", detail: str | None = None
    ) -> None:
        super().__init__(message)
        self.code, self.message, self.tool, self.detail = code, message, tool, detail

    def to_error(self, tool: str | None = None) -> ToolError:
        return ToolError(
            code=self.code, message=self.message, tool=tool or self.tool, detail=self.detail
        )


class Scope(OmitNone):
    """What netsight cannot see: set only when it watches part of the cluster."""

    namespaces: list[str] | None = Field(
        default=None, description="The only namespaces watched (NAMESPACE); objects elsewhere "
        "are unknown, not absent")
    not_visible: list[str] | None = Field(
        default=None, description="Kinds RBAC does not let netsight list: unknown, not absent")


class Enforcement(Model):
    """Whether the cluster's CNI enforces the policies a verdict reads: set by the policy
    tools when it does not (enforced false) or cannot be told (null)."""

    enforced: bool | None
    cni: list[str] = Field(description="The CNIs detected")
    reason: str


class ClusterMetadata(OmitNone):
    cluster_name: str
    timestamp: datetime = Field(default_factory=lambda: datetime.now(UTC))
    namespace: str | None = None
    provider: str = "kubernetes"
    graph_generation: int = Field(description="Increases with every change the graph takes in")
    source: str = Field(description='"manifests", "cluster" or "demo"')
    stale: dict[str, float] | None = Field(
        default=None,
        description="Kinds whose watch is down, with seconds since: answers about them may "
        "be out of date by that much",
    )
    scope: Scope | None = None
    enforcement: Enforcement | None = Field(
        default=None, description="Policy verdicts: set when the CNI does not enforce "
        "NetworkPolicy, or cannot be told to")


class Page(Model):
    """Where a paginated list stands: pass ``nextCursor`` back as ``cursor`` for more."""

    total: int
    returned: int
    remaining: int
    next_cursor: str | None = None


class ToolResult(Model):
    """Base of every tool's result."""

    metadata: ClusterMetadata
