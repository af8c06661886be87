"""Driving /dashboard in Debian's Chromium through Playwright (``executable_path``, never
``playwright install``): the launch, the skip or failure when it cannot be had, polling the
page, and the artefacts (screenshots, DOM snapshots) a browser test leaves behind.

Chromium comes from ``.ci/get-chromium.sh`` (``.ci/run`` calls it; apt needs root or sudo).
Without it a browser test skips, saying why (``pytest -ra`` lists it); a machine that must
run them sets ``NETSIGHT_REQUIRE_BROWSER=1``, and then a missing browser fails the test.
"""

from __future__ import annotations

import asyncio
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
# Screenshots and DOM snapshots, one folder per test (printed by the test that writes there).
ARTEFACTS = Path(os.environ.get("NETSIGHT_ARTEFACTS")
                 or Path(tempfile.gettempdir()) / "netsight-artefacts")


def require_browser() -> None:
    problem = None
    if not CHROMIUM.exists():
        problem = f"{CHROMIUM} is missing: run .ci/get-chromium.sh"
    else:
        try:
            import playwright.async_api  # noqa: F401
        except ImportError:
            problem = "playwright is not installed: pip install -e '.[dev]'"
    if problem is None:
        return
    if os.environ.get("NETSIGHT_REQUIRE_BROWSER") == "1":
        pytest.fail(f"the dashboard browser test cannot run: {problem}")
    pytest.skip(f"no browser for the dashboard test: {problem}")


def artefact_dir(test_name: str) -> Path:
    folder = ARTEFACTS / re.sub(r"[^\w.-]+", "_", test_name)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def keep(page: Any, name: str) -> Path:
    """A screenshot and the DOM as they are now, under the test's artefact folder."""
    folder: Path = page.artefacts
    await page.screenshot(path=str(folder / f"{name}.png"))
    (folder / f"{name}.html").write_text(await page.content(), encoding="utf-8")
    return folder


async def until(page: Any, expression: str, timeout: float = 10.0) -> Any:
    """Polls ``expression`` in the page until it is truthy (page.evaluate, which the page's
    Content-Security-Policy allows; wait_for_function would need 'unsafe-eval')."""
    deadline = time.monotonic() + timeout
    while True:
        value = await page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"never true in the page: {expression}")
        await asyncio.sleep(0.05)


async def click_node(page: Any, key: str) -> None:
    """A real mouse click where Cytoscape drew the node."""
    x, y = await page.evaluate(f"""(() => {{
        const cy = window.netsight.cy, node = cy.getElementById({key!r});
        cy.center(node);
        const box = cy.container().getBoundingClientRect(), at = node.renderedPosition();
        return [box.left + at.x, box.top + at.y];
    }})()""")
    await page.mouse.click(x, y)
