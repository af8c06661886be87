"""``netsight call TOOL`` on a cluster: the kubeconfig's current context (or ``--kubeconfig``,
``--context``), only the kinds the tool reads listed once, the tool run on them; what is
being listed shown on stderr when it takes more than a second."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from pathlib import Path
from typing import IO, Any

from netsight.analyzers.core.calling import AnyTool, answer, find, to_json
from netsight.analyzers.core.contracts import ErrorCode, ToolFailure
from netsight.analyzers.tools import TOOLS
from netsight.graph.ingest.api_responses import RETRYABLE, Forbidden, Gone, NotServed
from netsight.graph.ingest.client import KubeTransport
from netsight.graph.ingest.cluster_snapshot import SnapshotProgress, take_snapshot
from netsight.graph.runtime.collector import paused_gc
from netsight.graph.store.live import GraphStore, Source

PROGRESS_AFTER = 1.0  # seconds: a quick answer prints nothing but itself
PROGRESS_EVERY = 0.25


def answer_from_cluster(tool: AnyTool, raw_args: dict[str, Any], *, kubeconfig: str | None,
                        context: str | None, cluster_name: str, err: IO[str],
                        namespaces: tuple[str, ...] | None = None) -> dict[str, Any]:
    with paused_gc():  # a bulk load of long-lived objects: nothing for the collector to free
        return asyncio.run(_answer(tool, raw_args, kubeconfig, context, cluster_name, err,
                                   namespaces))


async def _answer(tool: AnyTool, raw_args: dict[str, Any], kubeconfig: str | None,
                  context: str | None, cluster_name: str, err: IO[str],
                  namespaces: tuple[str, ...] | None) -> dict[str, Any]:
    if not tool.metadata.reads and not tool.metadata.events:
        # recent_changes reads the change history a running server keeps; one list has none.
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          f"{tool.name} answers from the history of changes a running server "
                          "keeps; a one-shot list has none: give --server URL",
                          tool=tool.name)
    # $KUBECONFIG as it is now: kubernetes-asyncio reads it once, when first imported.
    kubeconfig = kubeconfig or os.environ.get("KUBECONFIG") or None
    default = Path("~/.kube/config").expanduser()
    if kubeconfig is None and not os.environ.get("KUBERNETES_SERVICE_HOST") \
            and not default.is_file():
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          f"no kubeconfig: $KUBECONFIG is not set and {default} does not "
                          "exist; give --kubeconfig, --server for a running netsight, or "
                          "--manifests", tool=tool.name)
    try:
        transport = await KubeTransport.connect(kubeconfig, context)
    except Exception as exc:  # ConfigException, a missing or unreadable file, ...
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          f"no usable Kubernetes configuration ({exc}); give --kubeconfig or "
                          "--context, --server for a running netsight, or --manifests",
                          tool=tool.name) from None
    store = GraphStore(source=Source.CLUSTER, cluster_name=cluster_name)
    progress = SnapshotProgress()
    reporter = asyncio.create_task(_report(progress, store, transport.host, err))
    try:
        snapshot = await take_snapshot(transport, store, tool.metadata.reads,
                                       progress=progress, namespaces=namespaces,
                                       events=tool.metadata.events)
    except (Gone, Forbidden, NotServed, *RETRYABLE) as exc:
        raise ToolFailure(ErrorCode.INVALID_INPUT,
                          f"cannot list from the API server at {transport.host} "
                          f"({type(exc).__name__}: {exc}); check --kubeconfig and --context",
                          tool=tool.name) from None
    finally:
        reporter.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await reporter
        await transport.close()
    find(TOOLS, tool.name, lambda t: t.provider is None or t.provider in snapshot.providers)
    unlisted = sorted(store.view().staleness())
    if unlisted:
        # The answer names them too (metadata.stale); said here as well, since a verdict
        # read without them may be wrong and a script may print the answer's verdict alone.
        err.write(f"netsight: could not list {', '.join(unlisted)} from {transport.host} "
                  "(forbidden or not served): the answer does not see them\n")
    return to_json(answer(tool, store.view(), raw_args), detail=raw_args.get("detail") is True)


async def _report(progress: SnapshotProgress, store: GraphStore, host: str,
                  err: IO[str]) -> None:
    """After a second, what has been listed so far: one line rewritten on a terminal, a line
    per kind listed otherwise; and once done, how long it took."""
    started = time.monotonic()
    await asyncio.sleep(PROGRESS_AFTER)
    terminal = err.isatty()
    shown = -1
    try:
        while True:
            done = len(progress.listed)
            if terminal or done != shown:
                line = (f"netsight: listing from {host}: {done}/{progress.kinds} kinds, "
                        f"{_objects(store)} objects")
                err.write(f"\r\x1b[K{line}" if terminal else f"{line}\n")
                err.flush()
                shown = done
            await asyncio.sleep(PROGRESS_EVERY)
    finally:
        err.write(("\r\x1b[K" if terminal else "")
                  + f"netsight: listed {len(progress.listed)} kinds, {_objects(store)} objects "
                    f"in {time.monotonic() - started:.1f}s\n")
        err.flush()


def _objects(store: GraphStore) -> int:
    view = store.view()
    return sum(view.count(kind) for kind in view.kinds())
