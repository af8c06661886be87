"""The README's "Fix the demo live" walkthrough, run as written: its kubectl lines against the
simulator serving the demo, the real informers, and the fixes the knowledge base learns,
held to the README's table."""

from __future__ import annotations

import asyncio
import os
import re
import shlex
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from netsight.analyzers.core.knowledge import Query
from netsight.knowledge.knowledge_base import KnowledgeBase
from netsight.knowledge.observer import Observer
from netsight.sim.demo import load_demo
from tests.conftest import ROOT
from tests.sim.test_kubectl_speaks_to_the_simulator import kubectl as kubectl  # the fixture
from tests.watching.conftest import Cluster, eventually
from tests.watching.conftest import cluster as cluster  # the fixture

pytestmark = pytest.mark.anyio
SECTION = "### Fix the demo live, then ask how it was fixed"


def walkthrough() -> tuple[list[list[str]], dict[str, str]]:
    """The kubectl lines of the README's section and its table (finding -> fix)."""
    text = (ROOT / "README.md").read_text()
    section = text[text.index(SECTION):]
    section = section[:section.index("\n## ")]
    block = section[section.index("```sh"):section.index("```", section.index("```sh") + 5)]
    commands = [shlex.split(line)[1:] for line in block.splitlines()
                if line.startswith("kubectl ")]
    table = dict(re.findall(r"^\| `(NS\d{4})` \| `(.+)` \|$", section, re.MULTILINE))
    return commands, table


@pytest.fixture
async def base(location: str) -> AsyncIterator[KnowledgeBase]:
    kb = await KnowledgeBase.open(location, "sim")
    try:
        yield kb
    finally:
        await kb.close()


async def test_the_readme_fixes_are_learned(cluster: Cluster, base: KnowledgeBase,
                                            kubectl: Path, tmp_path: Path) -> None:
    commands, table = walkthrough()
    assert len(commands) == 4
    assert set(table) == {"NS0101", "NS0503", "NS0760", "NS0105"}
    load_demo(cluster.sim.state)
    kubeconfig = cluster.sim.write_kubeconfig(tmp_path / "sim.kubeconfig")
    await cluster.watcher.start()
    assert await cluster.watcher.wait_synced(10)
    view = cluster.store.view()
    await eventually(lambda: view.exists("HTTPRoute/edge/storefront")
                     and view.count("EndpointSlice") > 0)
    observer = Observer(cluster.store, base.writes)
    assert observer.observe()
    for args in commands:
        generation = cluster.store.generation
        process = await asyncio.create_subprocess_exec(
            str(kubectl), *args, cwd=ROOT, env={**os.environ, "KUBECONFIG": str(kubeconfig)},
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        _, err = await asyncio.wait_for(process.communicate(), 60)
        assert process.returncode == 0, err.decode()
        await eventually(lambda g=generation: cluster.store.generation > g)  # type: ignore[misc]
        assert observer.observe()
    assert await base.flush()
    for code, fix in table.items():
        found = await base.explain(Query(None, code, None, 10))
        assert found is not None
        assert (code, found.occurrences, found.open) == (code, 1, 0)
        assert (code, [f.fix for f in found.fixes]) == (code, [fix])
