"""What the suite hands to each measurement that lives in its own module.

:class:`BenchContext` is the contract between the runner (``benchmarks/__main__.py``) and
the modules that measure something beside netsight (``benchmarks.baseline_design``,
``benchmarks.peer_server``): each exposes ``measure(ctx) -> dict``. The cluster is up and
netsight is ready when ``measure`` is called; the module must not change the cluster.
Fields are only ever added, with defaults, so a module written against this version keeps
working.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

# A tool call: the tool's name and its arguments, as an MCP client would send them.
Question = tuple[str, dict[str, Any]]


class ProgressBar(Protocol):
    """One phase's progress line on stderr; ``close`` ends the line (also on ``with`` exit)."""

    def advance(self, steps: int = 1) -> None: ...

    def close(self) -> None: ...

    def __enter__(self) -> ProgressBar: ...

    def __exit__(self, *exc: object) -> None: ...


# progress(phase, total): a bar for ``total`` steps (None: a counter without a total).
Progress = Callable[[str, "int | None"], ProgressBar]


@dataclass(frozen=True)
class BenchContext:
    """One scale's running cluster, as the measurements see it.

    ``api_url`` is the simulated API server's base URL (``http://127.0.0.1:PORT``) and
    ``kubeconfig`` a kubeconfig file pointing at it (token included), for clients that want
    one. ``netsight_mcp_url`` is netsight's Streamable HTTP endpoint (``.../mcp``).
    ``netsight_analyze(tool, args)`` runs a tool's analyzer in this process on netsight's
    live graph (arguments validated as the MCP server does) and returns its result model.
    ``questions`` are the fixed questions every design answers, by name:
    ``"reach"`` (can x/a reach y/b on port 80?) and ``"no_endpoints"`` (why does shop/cart
    have no endpoints?). ``repeats`` is how many timed calls a figure takes.
    """

    scale: str
    pods: int
    api_url: str
    kubeconfig: Path
    netsight_mcp_url: str
    netsight_analyze: Callable[[str, dict[str, Any]], Any]
    questions: Mapping[str, Question]
    progress: Progress
    repeats: int
    seed: int = 1
    quick: bool = False
    # netsight's HTTP base URL (``/api/graph``, ``/readyz``), without ``/mcp``
    netsight_url: str = ""
    # where a module may keep files between runs (an npm install, a cache); created by the
    # runner, under benchmarks/.work/ by default and never committed
    work_dir: Path = field(default_factory=lambda: Path("benchmarks/.work"))
    # the ``<scale>.json`` the run writes, as far as measured when this module is called
    extra: Mapping[str, Any] = field(default_factory=dict)
