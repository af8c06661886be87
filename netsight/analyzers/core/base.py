"""Helpers every analyzer shares: references and evidence from records, answer metadata,
and the errors for a namespace or name the graph does not know."""

from __future__ import annotations

from netsight.analyzers.core.contracts import (
    ClusterMetadata,
    Enforcement,
    ErrorCode,
    Evidence,
    ResourceRef,
    Scope,
    ToolFailure,
)
from netsight.analyzers.core.quoting import quoted
from netsight.graph.model.kinds import Kind
from netsight.graph.model.records import Record
from netsight.graph.store.live import GraphView


def ref(record: Record) -> ResourceRef:
    return ResourceRef(
        kind=record.kind.partition(".")[0],
        namespace=record.namespace or None,
        name=record.name,
        api_version=record.api_version,
    )


def evidence(record: Record, field_path: str, value: object) -> Evidence:
    return Evidence(resource=ref(record), field_path=field_path, value=value)


def metadata(view: GraphView, namespace: str | None = None, *,
             enforcement: Enforcement | None = None) -> ClusterMetadata:
    return ClusterMetadata(
        cluster_name=view.cluster_name,
        namespace=namespace,
        graph_generation=view.generation,
        source=view.source.value,
        stale=view.staleness() or None,
        scope=scope(view),
        enforcement=enforcement,
    )


def scope(view: GraphView) -> Scope | None:
    """What the graph cannot hold (namespaces not watched, kinds not listable), or None."""
    namespaces, hidden = view.watched_namespaces, view.not_visible()
    if namespaces is None and not hidden:
        return None
    return Scope(namespaces=None if namespaces is None else list(namespaces),
                 not_visible=hidden or None)


def require_watched(view: GraphView, namespace: str | None, *, argument: str,
                    tool: str) -> None:
    """INVALID_INPUT for a namespace outside the watched ones: unknown there is not absent,
    so the answer must not read as if it did not exist."""
    watched = view.watched_namespaces
    if namespace is None or watched is None or namespace in watched:
        return
    raise ToolFailure(
        ErrorCode.INVALID_INPUT,
        f"{argument}: namespace {quoted(namespace)} is not watched: this netsight watches "
        f"only {', '.join(watched)} (NAMESPACE), so it cannot tell what is there; ask about "
        "those, or add the namespace to NAMESPACE and its Role",
        tool=tool,
    )


def require_namespace(view: GraphView, namespace: str | None, *, tool: str) -> None:
    """NOT_FOUND for a namespace the graph has never seen (a likely typo)."""
    if namespace is None:
        return
    known = view.namespaces()
    watched = view.watched_namespaces
    if namespace not in known and watched is not None and namespace in watched \
            and view.untracked(Kind.NAMESPACE) is not None:
        return  # watched, but whether it exists cannot be read: empty answers, not NOT_FOUND
    if namespace not in known:
        raise ToolFailure(
            ErrorCode.NOT_FOUND,
            f"namespace {quoted(namespace)} not found{did_you_mean(namespace, known)}",
            tool=tool,
        )


def did_you_mean(name: str, candidates: set[str] | list[str]) -> str:
    import difflib

    # Only names of a length that can reach the cutoff (difflib's own first test,
    # real_quick_ratio): a caller's megabyte-long name is then not indexed for nothing.
    fair = sorted(c for c in candidates
                  if not c or 2.0 * min(len(c), len(name)) / (len(c) + len(name)) >= 0.6)
    close = difflib.get_close_matches(name, fair, n=3, cutoff=0.6) if fair else []
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
